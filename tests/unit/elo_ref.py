# Reference values for tests/unit/test_elo.c, computed independently of elo.c:
# Elo and CI by direct formulas; the trinomial GSPRT by maximizing the constrained
# log-likelihood over its one free parameter (ternary search, primal form); the
# pentanomial GSPRT with mpmath at 50 digits (Lagrange dual, findroot).
import math, mpmath
mpmath.mp.dps = 50
Z = 1.959963984540054
def elo(s): return -400*math.log10(1/s-1) if 0<s<1 else (math.inf if s>=1 else -math.inf)
def L(e): return 1/(1+10**(-e/400))
def est(c, a):
    n = sum(c); s = sum(ci*ai for ci,ai in zip(c,a))/n
    var = sum(ci*(ai-s)**2 for ci,ai in zip(c,a))/n
    h = Z*math.sqrt(var/n)
    return s, elo(s), (elo(s+h)-elo(s-h))/2
for w,d,l in [(60,20,20),(20,20,60),(513,1000,487),(3,4,3)]:
    print("tri", w,d,l, "%.15g %.15g %.15g" % est([l,d,w],[0,.5,1]))
for pr in [(5,10,20,15,10),(10,15,20,10,5),(0,3,10,5,2)]:
    print("pen", pr, "%.15g %.15g %.15g" % est(list(pr),[0,.25,.5,.75,1]))
def llr_tri(w,d,l,e0,e1):
    c=[max(x,1e-3) for x in (l,d,w)]; n=sum(c); p=[x/n for x in c]
    def best(s):  # q = (L, D, W) with W + D/2 = s: q_W = s - D/2, q_L = 1 - s - D/2
        f=lambda D: p[0]*math.log(1-s-D/2)+p[1]*math.log(D)+p[2]*math.log(s-D/2)
        lo,hi=1e-300,min(2*s,2*(1-s))*(1-1e-16)
        for _ in range(400):
            m1=lo+(hi-lo)/3; m2=hi-(hi-lo)/3
            if f(m1)<f(m2): lo=m1
            else: hi=m2
        return f((lo+hi)/2)
    return n*(best(L(e1))-best(L(e0)))
def llr_pen(pr,e0,e1):
    c=[mpmath.mpf(max(x,1e-3)) for x in pr]; n=sum(c); p=[x/n for x in c]
    a=[mpmath.mpf(i)/4 for i in range(5)]
    def q(s):
        s=mpmath.mpf(s); d=[ai-s for ai in a]
        g=lambda t: sum(pi*di/(1+t*di) for pi,di in zip(p,d))
        t=mpmath.findroot(g,(-1/max(d)*(1-mpmath.mpf(10)**-30), -1/min(d)*(1-mpmath.mpf(10)**-30)),solver='anderson')
        return [pi/(1+t*di) for pi,di in zip(p,d)]
    q0=q(L(e0)); q1=q(L(e1))
    return float(n*sum(pi*mpmath.log(b/a_) for pi,a_,b in zip(p,q0,q1)))
for w,d,l,e0,e1 in [(600,1000,500,0,5),(500,1000,600,0,5),(30,40,10,0,10),(10,0,0,-5,5)]:
    print("llrtri", w,d,l,e0,e1, "%.12g" % llr_tri(w,d,l,e0,e1))
for pr,e0,e1 in [((50,200,400,250,100),0,5),((100,250,400,200,50),0,5),((0,2,10,6,2),0,10)]:
    print("llrpen", pr,e0,e1, "%.12g" % llr_pen(pr,e0,e1))
print("bounds %.15g %.15g" % (math.log(0.05/0.95), math.log(0.95/0.05)))
