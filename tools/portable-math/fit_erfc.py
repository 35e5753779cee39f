from remez import *
import sys
a, b, c = mp.mpf(sys.argv[1]), mp.mpf(sys.argv[2]), mp.mpf(sys.argv[3])
fmt = sys.argv[4]
f = lambda x: mp.erfc(x+c)*mp.exp((x+c)**2)
w = lambda x: mp.exp(-(x+c)**2)
for n in [int(v) for v in sys.argv[5].split(',')]:
    basis = [ (lambda k: (lambda r: r**k))(k) for k in range(0, n+1)]
    (report2 if fmt == 'f32' else report)(f"erfcR [{a},{b}] c={c} deg{n}", f, w, basis, a-c, b-c, list(range(0, n+1)), fmt, ngrid=600)
