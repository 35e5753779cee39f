from remez import *
import sys
T = mp.mpf(sys.argv[1])
a, b = mp.mpf('1e-12'), T*T
f = lambda z: mp.erf(mp.sqrt(z))/mp.sqrt(z) - 1
w = lambda z: mp.sqrt(z)/mp.erf(mp.sqrt(z))
for fmt, degs in [('f32', [int(x) for x in sys.argv[2].split(',')]), ('f64', [int(x) for x in sys.argv[3].split(',')])]:
    for n in degs:
        basis = [ (lambda k: (lambda r: r**k))(k) for k in range(0, n+1)]
        (report2 if fmt=="f32" else report)(f"erfP T={T} deg{n}", f, w, basis, a, b, list(range(0, n+1)), fmt, ngrid=800)
