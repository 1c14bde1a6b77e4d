import sys, math
import numpy as np
sys.path.insert(0, __import__('os').path.dirname(__file__))
import mnist
from l1b import run

g, h, x, y, outs, gs = mnist.emit('/dev/null')
rng = np.random.default_rng(0)
params = {}
for n, s, init in mnist.PARAMS:
    if n.startswith('w'):
        params[n] = rng.normal(0, math.sqrt(2.0 / s[0]), s)
    elif n.startswith('g'):
        params[n] = 1.0 + rng.uniform(-0.2, 0.2, s)
    else:
        params[n] = rng.uniform(-0.1, 0.1, s)
X = rng.integers(0, 256, x.shape).astype(np.float64)
Y = rng.integers(0, 10, y.shape).astype(np.float64)

def evaluate(ps, labels=None):
    env = {'%x': X, '%y': Y if labels is None else labels}
    for n, v in ps.items():
        env['@' + n] = v
    run(g, env)
    return [env[o.name] for o in outs]

res = evaluate(params)
loss = float(res[0])
print('loss', loss)
assert len(res) == 2 + len(mnist.PARAMS), 'outputs: loss, one gradient per parameter, correct'
# Independent forward for the loss value.
def ref_logits(ps):
    xx = (X / 255.0).reshape(128, 784)
    def ln(z, gg, bb):
        mu = z.mean(1, keepdims=True); var = ((z - mu) ** 2).mean(1, keepdims=True)
        return (z - mu) / np.sqrt(var + 1e-5) * gg + bb
    def gelu(n):
        return 0.5 * n * (1 + np.tanh(math.sqrt(2 / math.pi) * (n + 0.044715 * n ** 3)))
    a1 = gelu(ln(xx @ ps['w1'] + ps['b1'], ps['g1'], ps['be1']))
    a2 = gelu(ln(a1 @ ps['w2'] + ps['b2'], ps['g2'], ps['be2']))
    return a2 @ ps['w3'] + ps['b3']
def ref_loss(ps):
    lg = ref_logits(ps)
    lg = lg - lg.max(1, keepdims=True)
    logp = lg - np.log(np.exp(lg).sum(1, keepdims=True))
    ce = -logp[np.arange(128), Y[:, 0].astype(int)].mean()
    return ce + 1e-4 * sum(np.abs(v).sum() for v in ps.values())
print('ref loss', ref_loss(params), 'diff', abs(ref_loss(params) - loss))
assert abs(ref_loss(params) - loss) < 1e-9

# correct: argmax hits, against numpy's argmax. Labels 255 (the runtime's
# padding of a last partial batch) count 0; ties count as hits.
def ref_correct(ps, labels):
    lg = ref_logits(ps)
    n = 0
    for r, l in enumerate(labels[:, 0].astype(int)):
        if 0 <= l < 10 and l in np.flatnonzero(lg[r] == lg[r].max()):
            n += 1
    return n
padded = Y.copy(); padded[100:] = 255
tied = {k: v.copy() for k, v in params.items()}
tied['w3'][:] = 0.0; tied['b3'][:] = 0.0; tied['b3'][[2, 7]] = 0.5  # every row ties 2 and 7
for what, ps, labels in [('random', params, Y), ('padded', params, padded), ('tied', tied, Y)]:
    got = float(evaluate(ps, labels)[-1])
    want = ref_correct(ps, labels)
    print('correct', what, got, 'want', want)
    assert got == want, 'correct disagrees with numpy argmax hits'
assert ref_correct(tied, Y) == int(np.isin(Y, [2, 7]).sum()) > 0
worst = 0
for i, (n, s, _) in enumerate(mnist.PARAMS):
    grad = res[1 + i]
    assert grad.shape == s
    errs = []
    for _ in range(6):
        idx = tuple(rng.integers(0, d) for d in s)
        if abs(params[n][idx]) < 1e-3:
            continue
        eps = 1e-5
        pp = {k: v.copy() for k, v in params.items()}; pp[n][idx] += eps
        pm = {k: v.copy() for k, v in params.items()}; pm[n][idx] -= eps
        fd = (ref_loss(pp) - ref_loss(pm)) / (2 * eps)
        an = grad[idx]
        errs.append(abs(fd - an) / max(1e-6, abs(fd) + abs(an)))
    print(n, 'max rel err', max(errs))
    worst = max(worst, max(errs))
print('WORST', worst)
assert worst < 1e-4, 'a gradient disagrees with finite differences'

# Handler vs a direct Adam.
def adam_ref(state, grads):
    t = state['step'] + 1
    warm = min(t / 1000, 1)
    prog = min(max(t - 1000, 0) / 3680, 1)
    lr = 3e-4 * warm * 0.5 * (1 + math.cos(math.pi * prog))
    out = {'step': t}
    for n in grads:
        m = 0.9 * state['m_' + n] + 0.1 * grads[n]
        v = 0.999 * state['v_' + n] + 0.001 * grads[n] ** 2
        mh = m / (1 - 0.9 ** t); vh = v / (1 - 0.999 ** t)
        out[n] = state[n] - lr * mh / (np.sqrt(vh) + 1e-8)
        out['m_' + n] = m; out['v_' + n] = v
    return out
for tstart in [0.0, 999.0, 2500.0, 5000.0]:
    state = {'step': np.asarray(tstart)}
    for n, s, _ in mnist.PARAMS:
        state[n] = params[n]; state['m_' + n] = rng.normal(0, 1e-3, s); state['v_' + n] = rng.uniform(0, 1e-5, s)
    grads = {n: res[1 + i] for i, (n, _, _) in enumerate(mnist.PARAMS)}
    env = {'@' + k: np.asarray(v, dtype=np.float64) for k, v in state.items()}
    for v, (n, _, _) in zip(gs, mnist.PARAMS):
        env[v.name] = grads[n]
    run(h, env)
    ref = adam_ref(state, grads)
    err = max(np.max(np.abs(env['@' + k] - ref[k])) for k in ref)
    print('adam t0', tstart, 'max abs err', err)
    assert err < 1e-12, 'the handler disagrees with Adam'
