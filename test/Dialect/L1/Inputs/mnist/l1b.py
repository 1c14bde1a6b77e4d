# A tiny builder for l1 tensor-graph text plus a numpy evaluator of it.
import numpy as np

class V:
    def __init__(self, name, shape, dt):
        self.name, self.shape, self.dt = name, tuple(shape), dt
    def ty(self):
        dims = ''.join(f'{d}x' for d in self.shape)
        return f'tensor<{dims}{self.dt}>'

def fmt(x):
    # Shortest repr that round-trips a double, spelled as an MLIR float.
    s = repr(float(x))
    mant, _, exp = s.partition('e')
    if '.' not in mant:
        mant += '.0'
    return mant + ('e' + exp if exp else '')

class B:
    def __init__(self, indent='  '):
        self.lines, self.prog, self.used, self.indent = [], [], {}, indent
    def _name(self, n):
        k = self.used.get(n, 0)
        self.used[n] = k + 1
        return n if k == 0 else f'{n}_{k}'
    def _emit(self, name, shape, dt, text, fn):
        v = V('%' + self._name(name), shape, dt)
        self.lines.append(self.indent + f'{v.name} = {text}')
        self.prog.append((v, fn))
        return v
    def comment(self, c):
        self.lines.append(self.indent + '// ' + c)
    # --- ops
    def bin(self, op, a, b, name):
        assert a.shape == b.shape and a.dt == b.dt, (op, a.shape, b.shape)
        f = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'div': np.divide,
             'max': np.maximum, 'min': np.minimum}[op]
        return self._emit(name, a.shape, a.dt,
            f'l1.{op} {a.name}, {b.name} : {a.ty()}, {b.ty()} -> {a.ty()}',
            lambda env: f(env[a.name], env[b.name]))
    def add(self, a, b, n): return self.bin('add', a, b, n)
    def sub(self, a, b, n): return self.bin('sub', a, b, n)
    def mul(self, a, b, n): return self.bin('mul', a, b, n)
    def div(self, a, b, n): return self.bin('div', a, b, n)
    def max(self, a, b, n): return self.bin('max', a, b, n)
    def min(self, a, b, n): return self.bin('min', a, b, n)
    def un(self, op, a, name):
        f = {'exp': np.exp, 'log': np.log, 'sqrt': np.sqrt, 'reciprocal': lambda x: 1.0 / x,
             'tanh': np.tanh, 'cos': np.cos, 'abs': np.abs, 'sign': np.sign,
             'neg': np.negative}[op]
        return self._emit(name, a.shape, a.dt, f'l1.{op} {a.name} : {a.ty()} -> {a.ty()}',
                          lambda env: f(env[a.name]))
    def matmul(self, a, b, name):
        assert a.shape[1] == b.shape[0]
        r = V('', (a.shape[0], b.shape[1]), a.dt)
        return self._emit(name, r.shape, a.dt,
            f'l1.matmul {a.name}, {b.name} : {a.ty()}, {b.ty()} -> {r.ty()}',
            lambda env: env[a.name] @ env[b.name])
    def scale(self, a, s, name):
        assert s.shape == ()
        return self._emit(name, a.shape, a.dt,
            f'l1.scale {a.name}, {s.name} : {a.ty()}, {s.ty()} -> {a.ty()}',
            lambda env: env[a.name] * env[s.name])
    def broadcast(self, a, shape, name, dims=None):
        r = V('', shape, a.dt)
        d = '' if dims is None else ' dims [' + ', '.join(map(str, dims)) + ']'
        if dims is None:
            fn = lambda env: np.broadcast_to(env[a.name], shape).copy()
        else:
            def fn(env, a=a, dims=dims):
                x = env[a.name]
                idx = [1] * len(shape)
                for i, dd in enumerate(dims):
                    idx[dd] = x.shape[i]
                return np.broadcast_to(x.reshape(idx), shape).copy()
        return self._emit(name, shape, a.dt, f'l1.broadcast {a.name}{d} : {a.ty()} -> {r.ty()}', fn)
    def transpose(self, a, name):
        r = V('', a.shape[::-1], a.dt)
        return self._emit(name, r.shape, a.dt, f'l1.transpose {a.name} : {a.ty()} -> {r.ty()}',
                          lambda env: env[a.name].T.copy())
    def reshape(self, a, shape, name):
        r = V('', shape, a.dt)
        return self._emit(name, shape, a.dt, f'l1.reshape {a.name} : {a.ty()} -> {r.ty()}',
                          lambda env: env[a.name].reshape(shape))
    def cast(self, a, dt, name):
        r = V('', a.shape, dt)
        return self._emit(name, a.shape, dt, f'l1.cast {a.name} : {a.ty()} -> {r.ty()}',
                          lambda env: env[a.name].astype(np.float64))
    def reduce(self, op, a, name, axis=None):
        shape = () if axis is None else tuple(d for i, d in enumerate(a.shape) if i != axis)
        r = V('', shape, a.dt)
        f = {'reduce_sum': np.sum, 'reduce_mean': np.mean, 'reduce_max': np.max}[op]
        ax = '' if axis is None else f' axis {axis}'
        return self._emit(name, shape, a.dt, f'l1.{op} {a.name}{ax} : {a.ty()} -> {r.ty()}',
                          lambda env: np.asarray(f(env[a.name], axis=axis)))
    def rsum(self, a, n, axis=None): return self.reduce('reduce_sum', a, n, axis)
    def rmax(self, a, n, axis=None): return self.reduce('reduce_max', a, n, axis)
    def rmean(self, a, n, axis=None): return self.reduce('reduce_mean', a, n, axis)
    def cmp(self, pred, a, b, name):
        assert a.shape == b.shape and a.dt == b.dt, ('cmp', a.shape, b.shape)
        f = {'eq': np.equal, 'ne': np.not_equal, 'lt': np.less, 'le': np.less_equal,
             'gt': np.greater, 'ge': np.greater_equal}[pred]
        r = V('', a.shape, 'i1')
        return self._emit(name, a.shape, 'i1',
            f'l1.cmp {pred}, {a.name}, {b.name} : {a.ty()}, {b.ty()} -> {r.ty()}',
            lambda env: f(env[a.name], env[b.name]))
    def one_hot(self, a, classes, name):
        shape = a.shape + (classes,)
        r = V('', shape, 'f32')
        return self._emit(name, shape, 'f32',
            f'l1.one_hot {a.name} classes {classes} : {a.ty()} -> {r.ty()}',
            lambda env: (env[a.name][..., None].astype(np.int64) == np.arange(classes)).astype(np.float64))
    def const(self, v, shape, name, dt='f32'):
        r = V('', shape, dt)
        return self._emit(name, shape, dt, f'l1.const {fmt(v)} : {r.ty()}',
                          lambda env: np.full(shape, float(v)))
    def window_read(self, window, field, shape, name):
        r = V('', shape, 'f32')
        return self._emit(name, shape, 'f32', f'l1.window_read {window}[@{field}] : {r.ty()}',
                          lambda env: env['@' + field])
    def state_read(self, field, shape, name):
        r = V('', shape, 'f32')
        return self._emit(name, shape, 'f32', f'l1.state_read @{field} : {r.ty()}',
                          lambda env: env['@' + field].copy())
    def state_write(self, field, v):
        self.lines.append(self.indent + f'l1.state_write @{field}, {v.name} : {v.ty()}')
        def fn(env):
            env['@' + field] = env[v.name]
        self.prog.append((None, fn))
    def ret(self, vals):
        if vals:
            self.lines.append(self.indent + 'l1.return ' + ', '.join(v.name for v in vals) +
                              ' : ' + ', '.join(v.ty() for v in vals))
        else:
            self.lines.append(self.indent + 'l1.return')
        self.outs = vals

def run(b, env):
    for v, fn in b.prog:
        r = fn(env)
        if v is not None:
            env[v.name] = np.asarray(r, dtype=np.float64)
    return env
