from remez import *
a, b = mp.mpf('-0.3476'), mp.mpf('0.3476')
f = lambda r: mp.exp(r) - 1 - r
w = lambda r: 1/mp.exp(r)
for fmt, degs in [('f32', [5, 6]), ('f64', [10, 11, 12])]:
    for n in degs:
        basis = [ (lambda k: (lambda r: r**k))(k) for k in range(2, n+1)]
        report(f"exp deg{n}", f, w, basis, a, b, list(range(2, n+1)), fmt, ngrid=1500)
