python3 fit_erf.py 0.875 6 11 
python3 fit_erfc2.py f32 0.875:1.5:6 1.5:2.5:6 2.5:4:5
python3 fit_erfc2.py f64 0.875:1.5:16 1.5:2.5:13 2.5:3.5:11 3.5:4.5:8 4.5:6:6
