# Linear Remez exchange (minimax) with mpmath. Used to derive the polynomial
# coefficients in src/math.rs. Run: python3 tools/remez.py <name>
import sys
import mpmath as mp
mp.mp.dps = 60

def remez(f, w, basis, a, b, ngrid=4000, iters=30, verbose=False):
    n = len(basis)
    # grid: chebyshev-distributed dense grid
    grid = [ (a+b)/2 + (b-a)/2*mp.cos(mp.pi*(ngrid-1-i)/(ngrid-1)) for i in range(ngrid)]
    fg = [f(x) for x in grid]
    wg = [w(x) for x in grid]
    bg = [[phi(x) for phi in basis] for x in grid]
    # initial reference: n+1 chebyshev extrema
    ref = [int(round((ngrid-1)*(1-mp.cos(mp.pi*j/n))/2)) for j in range(n+1)]
    best = None
    for it in range(iters):
        A = mp.matrix(n+1, n+1); rhs = mp.matrix(n+1, 1)
        for j, gi in enumerate(ref):
            for i in range(n):
                A[j, i] = bg[gi][i]
            A[j, n] = (-1)**j / wg[gi]
            rhs[j] = fg[gi]
        sol = mp.lu_solve(A, rhs)
        c = [sol[i] for i in range(n)]
        E = abs(sol[n])
        err = [wg[k]*(fg[k] - mp.fsum(c[i]*bg[k][i] for i in range(n))) for k in range(ngrid)]
        # local extrema
        ext = []
        for k in range(ngrid):
            l = err[k-1] if k > 0 else None
            r = err[k+1] if k < ngrid-1 else None
            e = err[k]
            if (l is None or abs(e) >= abs(l)) and (r is None or abs(e) >= abs(r)):
                ext.append(k)
        # merge same-sign runs, keep largest
        alt = []
        for k in ext:
            if alt and mp.sign(err[alt[-1]]) == mp.sign(err[k]):
                if abs(err[k]) > abs(err[alt[-1]]):
                    alt[-1] = k
            else:
                alt.append(k)
        while len(alt) > n+1:
            # drop smaller end
            if abs(err[alt[0]]) < abs(err[alt[-1]]):
                alt.pop(0)
            else:
                alt.pop()
        M = max(abs(e) for e in err)
        if verbose:
            print(it, mp.nstr(E, 5), mp.nstr(M, 5), len(alt))
        if best is None or M < best[1]:
            best = (c, M)
        if len(alt) < n+1:
            break
        ref = alt
        if M <= E*(1+mp.mpf('1e-6')):
            break
    return best

def evalmax(f, w, basis, c, a, b, ngrid=20000):
    M = 0
    for i in range(ngrid):
        x = a + (b-a)*i/(ngrid-1)
        e = abs(w(x)*(f(x) - mp.fsum(ci*phi(x) for ci, phi in zip(c, basis))))
        M = max(M, e)
    return M

import struct
def f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]
def to_f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0] if abs(x) > 1e-30 else float(x)

def round_c(c, fmt):
    if fmt == 'f64':
        return [mp.mpf(float(ci)) for ci in c]
    return [mp.mpf(f32(ci)) for ci in c]

def lit(x, fmt):
    # shortest decimal literal that round-trips
    if fmt == 'f64':
        return repr(float(x))
    v = f32(x)
    for p in range(6, 12):
        t = '%.*e' % (p-1, v)
        if f32(float(t)) == v:
            return t
    return repr(v)

def report(name, f, w, basis, a, b, degs, fmt, **kw):
    c, M = remez(f, w, basis, a, b, **kw)
    cr = round_c(c, fmt)
    Mr = evalmax(f, w, basis, cr, a, b)
    print(f"{name} [{fmt}] minimax err {mp.nstr(M,5)} (2^{mp.nstr(mp.log(M,2),4)}), after rounding {mp.nstr(Mr,5)} (2^{mp.nstr(mp.log(Mr,2),4)})")
    for d, ci in zip(degs, cr):
        print(f"   c{d} = {lit(ci, fmt)}")
    return cr

def report2(name, f, w, basis, a, b, degs, fmt, **kw):
    """Minimax, then round coefficients one at a time (lowest degree first),
    re-fitting the remaining ones after each rounding."""
    fixed = []
    c, M = remez(f, w, basis, a, b, **kw)
    for i in range(len(basis)):
        if i > 0:
            fi = list(fixed)
            g = (lambda fi: (lambda x: f(x) - mp.fsum(ci*basis[j](x) for j, ci in enumerate(fi))))(fi)
            c, _ = remez(g, w, basis[i:], a, b, **kw)
            c = list(fixed) + c
        fixed.append(round_c([c[i]], fmt)[0])
    Mr = evalmax(f, w, basis, fixed, a, b)
    print(f"{name} [{fmt}] minimax err {mp.nstr(M,5)} (2^{mp.nstr(mp.log(M,2),4)}), after rounding+refit {mp.nstr(Mr,5)} (2^{mp.nstr(mp.log(Mr,2),4)})")
    for d, ci in zip(degs, fixed):
        print(f"   c{d} = {lit(ci, fmt)}")
    return fixed
