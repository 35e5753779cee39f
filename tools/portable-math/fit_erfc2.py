from remez import *
import sys
fmt = sys.argv[1]
for spec in sys.argv[2:]:
    a, b, n = spec.split(':')
    a, b, n = mp.mpf(a), mp.mpf(b), int(n)
    c = (a+b)/2
    f = lambda x: mp.erfc(x+c)*mp.exp((x+c)**2)
    w = lambda x: 1/f(x)
    basis = [ (lambda k: (lambda r: r**k))(k) for k in range(0, n+1)]
    cr = (report2 if fmt == 'f32' else report)(f"erfcR [{a},{b}] c={c} deg{n}", f, w, basis, a-c, b-c, list(range(0, n+1)), fmt, ngrid=500)
    # absolute error on erfc, relative to 1
    M = 0
    for i in range(3000):
        x = a + (b-a)*i/2999
        M = max(M, abs(mp.erfc(x) - mp.exp(-x*x)*mp.fsum(ci*(x-c)**k for k, ci in enumerate(cr))))
    print("   abs erfc err 2^", mp.nstr(mp.log(M, 2), 4))
