from remez import *
a, b = mp.mpf('1e-30'), mp.mpf('0.02944')
f = lambda z: (2*mp.atanh(mp.sqrt(z)) - 2*mp.sqrt(z))/mp.sqrt(z)
w = lambda z: mp.mpf(1)
for fmt, degs in [('f32', [3, 4]), ('f64', [6, 7])]:
    for n in degs:
        basis = [ (lambda k: (lambda r: r**k))(k) for k in range(1, n+1)]
        report(f"logR deg{n}", f, w, basis, a, b, list(range(1, n+1)), fmt, ngrid=1000)
