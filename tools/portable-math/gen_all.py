# Regenerates every coefficient set used in src/math.rs.
from remez import *
P = lambda lo, hi: [ (lambda k: (lambda r: r**k))(k) for k in range(lo, hi+1)]
def run(name, f, w, lo, hi, a, b, fmt, ngrid=800):
    (report2 if fmt == 'f32' else report)(name, f, w, P(lo, hi), a, b, list(range(lo, hi+1)), fmt, ngrid=ngrid)
# exp: exp(r) = 1 + r + sum c_k r^k, |r| <= 0.3476
fe = lambda r: mp.exp(r) - 1 - r; we = lambda r: 1/mp.exp(r)
run("EXP_F32", fe, we, 2, 6, mp.mpf('-0.3476'), mp.mpf('0.3476'), 'f32')
run("EXP_F64", fe, we, 2, 12, mp.mpf('-0.3476'), mp.mpf('0.3476'), 'f64')
# log: R(z), z = s^2 in [0, 0.02944]
fl = lambda z: (2*mp.atanh(mp.sqrt(z)) - 2*mp.sqrt(z))/mp.sqrt(z); wl = lambda z: mp.mpf(1)
run("LOG_F32", fl, wl, 1, 4, mp.mpf('1e-30'), mp.mpf('0.02944'), 'f32')
run("LOG_F64", fl, wl, 1, 7, mp.mpf('1e-30'), mp.mpf('0.02944'), 'f64')
# tanh small: tanh(x) = x + x^3 P(x^2), x^2 in [0, 0.5625^2]
ft = lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z))/z**mp.mpf(1.5); wt = lambda z: z**mp.mpf(1.5)/mp.tanh(mp.sqrt(z))
run("TANH_F32", ft, wt, 0, 5, mp.mpf('1e-12'), mp.mpf('0.31640625'), 'f32')
run("TANH_F64", ft, wt, 0, 11, mp.mpf('1e-12'), mp.mpf('0.31640625'), 'f64')
