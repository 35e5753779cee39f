from remez import *
a, b = mp.mpf('1e-12'), mp.mpf('0.31640625')
f = lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z))/z**mp.mpf(1.5)
w = lambda z: z**mp.mpf(1.5)/mp.tanh(mp.sqrt(z))
for fmt, degs in [('f32', [4, 5]), ('f64', [10, 11, 12])]:
    for n in degs:
        basis = [ (lambda k: (lambda r: r**k))(k) for k in range(0, n+1)]
        report(f"tanhP deg{n}", f, w, basis, a, b, list(range(0, n+1)), fmt, ngrid=1000)
