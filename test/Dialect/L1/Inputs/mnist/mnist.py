import sys, math
import numpy as np
sys.path.insert(0, __import__('os').path.dirname(__file__))
from l1b import B, V, run, fmt

BATCH, D, H, C = 128, 784, 256, 10
LAMBDA = 1e-4
LN_EPS = 1e-5
GELU_K = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715
LR, BETA1, BETA2, ADAM_EPS = 3e-4, 0.9, 0.999, 1e-8
WARMUP = 1000
TOTAL_STEPS = 4680  # 10 epochs of 60000 samples at batch 128, last partial batch dropped
WIN = '@model_state::@weights'

PARAMS = [  # name, shape, init
    ('w1', (D, H), 'kaiming'), ('b1', (H,), 'zeros'),
    ('g1', (H,), 'ones'), ('be1', (H,), 'zeros'),
    ('w2', (H, H), 'kaiming'), ('b2', (H,), 'zeros'),
    ('g2', (H,), 'ones'), ('be2', (H,), 'zeros'),
    ('w3', (H, C), 'kaiming'), ('b3', (C,), 'zeros'),
]
SHAPE = {n: s for n, s, _ in PARAMS}

def build_graph():
    g = B()
    x_u8 = V('%x', (BATCH, 28, 28), 'ui8')
    y_u8 = V('%y', (BATCH, 1), 'ui8')
    g.comment('Parameters, read through the window.')
    p = {n: g.window_read(WIN, n, s, n) for n, s, _ in PARAMS}

    g.comment('Inputs: pixels to [0, 1], labels to one-hot rows.')
    xf = g.cast(x_u8, 'f32', 'xf')
    inv255 = g.const(1.0 / 255.0, (), 'inv255')
    xs = g.scale(xf, inv255, 'xs')
    x = g.reshape(xs, (BATCH, D), 'x0')
    yl = g.reshape(y_u8, (BATCH,), 'labels')
    Y = g.one_hot(yl, C, 'onehot')

    invH = g.const(1.0 / H, (), 'inv_h')
    eps_b = g.const(LN_EPS, (BATCH,), 'ln_eps')
    half = g.const(0.5, (), 'half')
    one_bh = g.const(1.0, (BATCH, H), 'ones_bh')
    kgelu = g.const(GELU_K, (), 'gelu_k')
    cgelu = g.const(GELU_C, (), 'gelu_c')
    c3gelu = g.const(3.0 * GELU_C, (), 'gelu_3c')

    def linear(a, w, b, tag):
        z = g.matmul(a, w, 'mm' + tag)
        bb = g.broadcast(b, z.shape, 'bias' + tag)
        return g.add(z, bb, 'z' + tag)

    def layernorm(z, gain, bias, tag):
        s = g.rsum(z, 'sum' + tag, axis=1)
        mu = g.scale(s, invH, 'mu' + tag)
        mub = g.broadcast(mu, z.shape, 'mub' + tag, dims=[0])
        d = g.sub(z, mub, 'dev' + tag)
        d2 = g.mul(d, d, 'dev2' + tag)
        vs = g.rsum(d2, 'varsum' + tag, axis=1)
        var = g.scale(vs, invH, 'var' + tag)
        ve = g.add(var, eps_b, 'vareps' + tag)
        sd = g.sqrt(ve, 'std' + tag) if False else g.un('sqrt', ve, 'std' + tag)
        rstd = g.un('reciprocal', sd, 'rstd' + tag)
        rstdb = g.broadcast(rstd, z.shape, 'rstdb' + tag, dims=[0])
        xhat = g.mul(d, rstdb, 'xhat' + tag)
        gb = g.broadcast(gain, z.shape, 'gainb' + tag)
        bb = g.broadcast(bias, z.shape, 'shiftb' + tag)
        xg = g.mul(xhat, gb, 'xg' + tag)
        n = g.add(xg, bb, 'n' + tag)
        return n, xhat, rstdb, gb

    def gelu(n, tag):
        # gelu(n) = 0.5 n (1 + tanh(k (n + c n^3)))
        n2 = g.mul(n, n, 'nsq' + tag)
        n3 = g.mul(n2, n, 'ncube' + tag)
        cn3 = g.scale(n3, cgelu, 'cncube' + tag)
        inner = g.add(n, cn3, 'inner' + tag)
        u = g.scale(inner, kgelu, 'u' + tag)
        th = g.un('tanh', u, 'th' + tag)
        onep = g.add(one_bh, th, 'onept' + tag)
        hn = g.scale(n, half, 'halfn' + tag)
        a = g.mul(hn, onep, 'a' + tag)
        return a, (n, n2, th, onep)

    def gelu_grad(da, saved, tag):
        # d/dn = 0.5 (1 + th) + 0.5 n (1 - th^2) k (1 + 3c n^2)
        n, n2, th, onep = saved
        t1 = g.scale(onep, half, 'gd_first' + tag)
        th2 = g.mul(th, th, 'th2' + tag)
        sech2 = g.sub(one_bh, th2, 'sech2' + tag)
        c3n2 = g.scale(n2, c3gelu, 'c3n2' + tag)
        du = g.add(one_bh, c3n2, 'dinner' + tag)
        duk = g.scale(du, kgelu, 'du' + tag)
        hn = g.scale(n, half, 'gd_halfn' + tag)
        t2a = g.mul(hn, sech2, 'gd_t2a' + tag)
        t2 = g.mul(t2a, duk, 'gd_second' + tag)
        dg = g.add(t1, t2, 'dgelu' + tag)
        return g.mul(da, dg, 'dn' + tag)

    def layernorm_grad(dn, xhat, rstdb, gb, tag):
        # n = xhat * g + be; dz = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
        dgain_rows = g.mul(dn, xhat, 'dn_xhat' + tag)
        dgain = g.rsum(dgain_rows, 'dgain' + tag, axis=0)
        dshift = g.rsum(dn, 'dshift' + tag, axis=0)
        dxhat = g.mul(dn, gb, 'dxhat' + tag)
        s1 = g.rsum(dxhat, 'dxhat_sum' + tag, axis=1)
        m1 = g.scale(s1, invH, 'dxhat_mean' + tag)
        m1b = g.broadcast(m1, dn.shape, 'dxhat_meanb' + tag, dims=[0])
        dxx = g.mul(dxhat, xhat, 'dxhat_xhat' + tag)
        s2 = g.rsum(dxx, 'dxx_sum' + tag, axis=1)
        m2 = g.scale(s2, invH, 'dxx_mean' + tag)
        m2b = g.broadcast(m2, dn.shape, 'dxx_meanb' + tag, dims=[0])
        proj = g.mul(xhat, m2b, 'proj' + tag)
        c1 = g.sub(dxhat, m1b, 'centered' + tag)
        c2 = g.sub(c1, proj, 'centered2' + tag)
        dz = g.mul(c2, rstdb, 'dz' + tag)
        return dz, dgain, dshift

    g.comment('Forward: linear(784, 256), norm(layer), gelu.')
    z1 = linear(x, p['w1'], p['b1'], '1')
    n1, xhat1, rstdb1, gb1 = layernorm(z1, p['g1'], p['be1'], '1')
    a1, sv1 = gelu(n1, '1')
    g.comment('Forward: linear(256, 256), norm(layer), gelu.')
    z2 = linear(a1, p['w2'], p['b2'], '2')
    n2, xhat2, rstdb2, gb2 = layernorm(z2, p['g2'], p['be2'], '2')
    a2, sv2 = gelu(n2, '2')
    g.comment('Forward: linear(256, 10); softmax cross-entropy on logits.')
    logits = linear(a2, p['w3'], p['b3'], '3')
    mx = g.rmax(logits, 'rowmax', axis=1)
    mxb = g.broadcast(mx, logits.shape, 'rowmaxb', dims=[0])
    sh = g.sub(logits, mxb, 'shifted')
    e = g.un('exp', sh, 'exps')
    se = g.rsum(e, 'expsum', axis=1)
    lse = g.un('log', se, 'logsumexp')
    lseb = g.broadcast(lse, logits.shape, 'logsumexpb', dims=[0])
    logp = g.sub(sh, lseb, 'logp')
    ylogp = g.mul(Y, logp, 'ylogp')
    tot = g.rsum(ylogp, 'ylogp_sum')
    negInvB = g.const(-1.0 / BATCH, (), 'neg_inv_batch')
    ce = g.scale(tot, negInvB, 'ce')
    g.comment('L1 penalty: 1e-4 * sum |p| over every parameter.')
    l1sum = None
    for n, s, _ in PARAMS:
        ab = g.un('abs', p[n], 'abs_' + n)
        sm = g.rsum(ab, 'l1_' + n)
        l1sum = sm if l1sum is None else g.add(l1sum, sm, 'l1_acc')
    lam = g.const(LAMBDA, (), 'lambda')
    pen = g.scale(l1sum, lam, 'penalty')
    loss = g.add(ce, pen, 'loss')

    g.comment('Evaluation: the rows whose label\'s logit is the row max (ties count as')
    g.comment('hits; a label outside [0, 10), as on padded rows, one-hot encodes as')
    g.comment('zeros and counts 0). Not part of the loss: it has no gradient.')
    is_max = g.cmp('ge', logits, mxb, 'is_rowmax')
    hits = g.cast(is_max, 'f32', 'rowmax_hits')
    label_hits = g.mul(Y, hits, 'label_hits')
    correct = g.rsum(label_hits, 'correct')

    g.comment('Backward: d loss / d logits = (softmax - onehot) / batch.')
    probs = g.un('exp', logp, 'probs')
    dl = g.sub(probs, Y, 'probs_minus_y')
    invB = g.const(1.0 / BATCH, (), 'inv_batch')
    dlogits = g.scale(dl, invB, 'dlogits')

    def l1grad(n):
        sg = g.un('sign', p[n], 'sign_' + n)
        return g.scale(sg, lam, 'dpen_' + n)

    grads = {}
    g.comment('Backward through linear(256, 10).')
    a2t = g.transpose(a2, 'a2t')
    gw3 = g.matmul(a2t, dlogits, 'dw3_data')
    grads['w3'] = g.add(gw3, l1grad('w3'), 'gw3')
    gb3 = g.rsum(dlogits, 'db3_data', axis=0)
    grads['b3'] = g.add(gb3, l1grad('b3'), 'gb3')
    w3t = g.transpose(p['w3'], 'w3t')
    da2 = g.matmul(dlogits, w3t, 'da2')
    g.comment('Backward through gelu, norm(layer), linear(256, 256).')
    dn2 = gelu_grad(da2, sv2, '2')
    dz2, dg2, dbe2 = layernorm_grad(dn2, xhat2, rstdb2, gb2, '2')
    grads['g2'] = g.add(dg2, l1grad('g2'), 'gg2')
    grads['be2'] = g.add(dbe2, l1grad('be2'), 'gbe2')
    a1t = g.transpose(a1, 'a1t')
    gw2 = g.matmul(a1t, dz2, 'dw2_data')
    grads['w2'] = g.add(gw2, l1grad('w2'), 'gw2')
    gb2_ = g.rsum(dz2, 'db2_data', axis=0)
    grads['b2'] = g.add(gb2_, l1grad('b2'), 'gb2')
    w2t = g.transpose(p['w2'], 'w2t')
    da1 = g.matmul(dz2, w2t, 'da1')
    g.comment('Backward through gelu, norm(layer), linear(784, 256).')
    dn1 = gelu_grad(da1, sv1, '1')
    dz1, dg1, dbe1 = layernorm_grad(dn1, xhat1, rstdb1, gb1, '1')
    grads['g1'] = g.add(dg1, l1grad('g1'), 'gg1')
    grads['be1'] = g.add(dbe1, l1grad('be1'), 'gbe1')
    xt = g.transpose(x, 'xt')
    gw1 = g.matmul(xt, dz1, 'dw1_data')
    grads['w1'] = g.add(gw1, l1grad('w1'), 'gw1')
    gb1_ = g.rsum(dz1, 'db1_data', axis=0)
    grads['b1'] = g.add(gb1_, l1grad('b1'), 'gb1')
    outs = [loss] + [grads[n] for n, _, _ in PARAMS] + [correct]
    g.ret(outs)
    return g, x_u8, y_u8, outs

def build_handler():
    h = B(indent='    ')
    gs = [V('%g_' + n, s, 'f32') for n, s, _ in PARAMS]
    h.comment('step t <- t + 1')
    t0 = h.state_read('step', (), 't_prev')
    one = h.const(1.0, (), 'one')
    t = h.add(t0, one, 't')
    h.state_write('step', t)
    h.comment('lr = 3e-4 * min(t / 1000, 1) * 0.5 (1 + cos(pi * min(max(t - 1000, 0) / %d, 1)))'
              % (TOTAL_STEPS - WARMUP))
    invw = h.const(1.0 / WARMUP, (), 'inv_warmup')
    wf = h.scale(t, invw, 'warm_frac')
    warm = h.min(wf, one, 'warm')
    wst = h.const(float(WARMUP), (), 'warmup')
    after = h.sub(t, wst, 'after_warmup')
    zero = h.const(0.0, (), 'zero')
    afterp = h.max(after, zero, 'after_pos')
    invd = h.const(1.0 / (TOTAL_STEPS - WARMUP), (), 'inv_decay_steps')
    prog0 = h.scale(afterp, invd, 'progress_raw')
    prog = h.min(prog0, one, 'progress')
    pi = h.const(math.pi, (), 'pi')
    ang = h.mul(prog, pi, 'angle')
    cs = h.un('cos', ang, 'cosine')
    onepc = h.add(one, cs, 'one_plus_cos')
    half = h.const(0.5, (), 'half')
    decay = h.mul(onepc, half, 'decay')
    base = h.const(LR, (), 'base_lr')
    lr0 = h.mul(base, warm, 'lr_warm')
    lr = h.mul(lr0, decay, 'lr')
    h.comment('Adam bias corrections: 1 - beta^t = 1 - exp(t ln beta)')
    lnb1 = h.const(math.log(BETA1), (), 'ln_beta1')
    lnb2 = h.const(math.log(BETA2), (), 'ln_beta2')
    pw1 = h.un('exp', h.mul(t, lnb1, 'tlnb1'), 'beta1_t')
    pw2 = h.un('exp', h.mul(t, lnb2, 'tlnb2'), 'beta2_t')
    bc1 = h.sub(one, pw1, 'bc1')
    bc2 = h.sub(one, pw2, 'bc2')
    step = h.div(lr, bc1, 'step_size')
    invbc2 = h.un('reciprocal', bc2, 'inv_bc2')
    b1 = h.const(BETA1, (), 'beta1')
    omb1 = h.const(0.1, (), 'one_minus_beta1')
    b2 = h.const(BETA2, (), 'beta2')
    omb2 = h.const(0.001, (), 'one_minus_beta2')
    epsc = {}
    for (n, s, _), gv in zip(PARAMS, gs):
        if s not in epsc:
            epsc[s] = h.const(ADAM_EPS, s, 'adam_eps')
        h.comment(f'Adam on {n}')
        m0 = h.state_read('m_' + n, s, 'm_' + n)
        v0 = h.state_read('v_' + n, s, 'v_' + n)
        p0 = h.state_read(n, s, n)
        m1 = h.add(h.scale(m0, b1, 'mdecay_' + n), h.scale(gv, omb1, 'mgrad_' + n), 'mnew_' + n)
        gg = h.mul(gv, gv, 'gsq_' + n)
        v1 = h.add(h.scale(v0, b2, 'vdecay_' + n), h.scale(gg, omb2, 'vgrad_' + n), 'vnew_' + n)
        vh = h.scale(v1, invbc2, 'vhat_' + n)
        den = h.add(h.un('sqrt', vh, 'vroot_' + n), epsc[s], 'denom_' + n)
        r = h.div(m1, den, 'ratio_' + n)
        upd = h.scale(r, step, 'update_' + n)
        p1 = h.sub(p0, upd, 'new_' + n)
        h.state_write('m_' + n, m1)
        h.state_write('v_' + n, v1)
        h.state_write(n, p1)
    h.ret([])
    return h, gs

def ty(shape, dt='f32'):
    return V('', shape, dt).ty()

MATH_NOTES = """\
// Math notes (the later finite-difference check relies on them):
// * Layer norm over the 256 features of a row, biased variance, eps 1e-5:
//   n = (z - mean) / sqrt(var + eps) * g + be.
// * GELU is the tanh form: 0.5 n (1 + tanh(sqrt(2/pi) (n + 0.044715 n^3))).
// * Cross-entropy is the batch mean of -log softmax(logits)[label].
// * The L1 term covers every parameter (weights, biases, norm gains and
//   shifts); its gradient is 1e-4 * sign(p) (0 at p = 0, a subgradient).
// * correct counts the rows whose label's logit equals the row max (an
//   argmax hit; ties count as hits); a label outside [0, 10) counts 0.
// * Adam: beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected; learning rate
//   3e-4 * min(t/1000, 1) * 0.5 (1 + cos(pi * min(max(t-1000, 0)/@DECAY@, 1)));
//   the cosine reaches 0 at step @TOTAL@ = @EPOCHS@ epochs of 468 batches.
"""

L2_METHOD = """\
// The L2 method it places (spec, "Trace - MNIST at L2"):
//   sample:   epoch_shuffle(batch: 128)
//   infer:    linear(784, 256), norm(layer), gelu,
//             linear(256, 256), norm(layer), gelu,
//             linear(256, 10), softmax
//   loss:     cross-entropy + 1e-4 * L1(params)          (L3 objective)
//   backward: autodiff(mode: reverse)  -> written out below, op by op
//   update:   schedule(warmup: 1000, decay: cosine, inner: adam(lr: 3e-4))
//             -> the GradUpdate handler
"""

HEADER = {
    'single_gpu': """\
// Fashion-MNIST at L1: the spec's "Trace - MNIST at L1", completed.
//
""" + L2_METHOD + """\
//
// Dataflow of one step:
//   load_data (cpu_0: read a shuffled batch from ssd_0 into ram_0)
//     -> transfer_to_gpu (cpu_0: DMA ram_0 -> gpu_0)
//     -> forward_backward (gpu_0: reads @model_state::@weights; returns the
//        loss, the gradient of every parameter, and the batch's argmax hits)
//     -> transfer_grads (cpu_0: loss and correct to ram_0 and reported;
//        gradients sent to @model_state::@GradUpdate, which runs Adam on gpu_0)
// The reader (forward_backward) precedes the only message to the writer
// (GradUpdate) in the dataflow, and the actor is listed in the schedule:
// at pipeline_depth 2 it fences step N's update before step N+1's read (L1.4).
//
""" + MATH_NOTES,
    'single_cpu': """\
// Fashion-MNIST at L1 on this host: the spec's MNIST trace
// (examples/mnist/mnist.l1.mlir) placed on one x86-64 CPU without an
// accelerator. The model, its explicit backward and the Adam handler are the
// same ops; the system, the placement and the stages differ. Generated by
// test/Dialect/L1/Inputs/mnist/mnist.py --system single_cpu (edit that).
//
""" + L2_METHOD + """\
//
// Dataflow of one step:
//   load_data (cpu_0: read a shuffled batch from ssd_0 into ram_0)
//     -> forward_backward (cpu_0: reads the batch in ram_0 and
//        @model_state::@weights; returns the loss, the gradient of every
//        parameter, and the batch's argmax hits, in ram_0)
//     -> report_and_send (cpu_0: loss and correct reported; gradients sent
//        to @model_state::@GradUpdate, which runs Adam on cpu_0)
// cpu_0 has no memory of its own: its tensor graph and its actor keep their
// buffers in ram_0, the memory node it has an edge to, so nothing is
// transferred. The plan assumes cores = 2; the runtime uses the cores the
// machine has when it runs.
// The reader (forward_backward) precedes the only message to the writer
// (GradUpdate) in the dataflow, and the actor is listed in the schedule:
// at pipeline_depth 2 it fences step N's update before step N+1's read (L1.4).
//
""" + MATH_NOTES,
}

SYSTEMS = {
    'single_gpu': [
        'l1.node @ssd_0 storage',
        'l1.node @ram_0 memory {capacity = "32GB"}',
        'l1.node @cpu_0 compute {isa = "x86_64", cores = 8}',
        'l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}',
        'l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"',
        'l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"',
        'l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"',
    ],
    'single_cpu': [
        'l1.node @ssd_0 storage',
        'l1.node @ram_0 memory {capacity = "16GB"}',
        'l1.node @cpu_0 compute {isa = "x86_64", cores = 2}',
        'l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"',
        'l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"',
    ],
}

def emit(path, system='single_gpu'):
    gpu = system == 'single_gpu'
    g, x, y, outs = build_graph()
    h, gs = build_handler()
    buf = lambda node, shape, dt='f32': f'!l1.buf<@{node}, {ty(shape, dt)}>'
    # Where the model runs, and where the buffers of its graph live.
    dev = 'gpu_0' if gpu else 'cpu_0'
    devmem = 'gpu_0' if gpu else 'ram_0'
    data = 'mnist' if gpu else 'fashion_mnist'
    L = []
    w = L.append
    w(HEADER[system])
    w(f'l1.system @{system} {{')
    for line in SYSTEMS[system]:
        w('  ' + line)
    w('}')
    w('')
    w(f'l1.data @{data} {{')
    w('  l1.field @images : tensor<28x28xui8> at @ssd_0')
    w('      path "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" format idx')
    w('  l1.field @labels : tensor<1xui8> at @ssd_0')
    w('      path "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz" format idx')
    w('}')
    w('')
    w(f'l1.actor @model_state on @{dev} {{')
    w('  // Parameters of the L2 model.')
    for n, s, init in PARAMS:
        w(f'  l1.state @{n} : {ty(s)} init {init}')
    w('  // Adam moments.')
    for n, s, _ in PARAMS:
        w(f'  l1.state @m_{n} : {ty(s)} init zeros')
        w(f'  l1.state @v_{n} : {ty(s)} init zeros')
    w('  // Updates applied so far.')
    w('  l1.state @step : tensor<f32> init zeros')
    w('')
    w('  l1.window @weights [' + ', '.join('@' + n for n, _, _ in PARAMS) + '] readers [@forward_backward]')
    w('')
    w('  l1.handler @GradUpdate(' + ',\n      '.join(f'{v.name}: {v.ty()}' for v in gs) + ') {')
    L.extend(h.lines)
    w('  }')
    w('}')
    w('')
    xb, yb = buf('ram_0', x.shape, 'ui8'), buf('ram_0', y.shape, 'ui8')
    xg, yg = buf('gpu_0', x.shape, 'ui8'), buf('gpu_0', y.shape, 'ui8')
    w('// epoch_shuffle(batch: 128): a fresh permutation per epoch; the last')
    w('// partial batch is dropped.')
    w('l1.stage @load_data on @cpu_0 process() {')
    w(f'  %images, %labels = l1.read_batch @{data} [@images, @labels] batch {BATCH} shuffle drop_last seed 0 : {xb}, {yb}')
    if gpu:
        w(f'  l1.forward @transfer_to_gpu(%images, %labels) : {xb}, {yb}')
        w('}')
        w('')
        w(f'l1.stage @transfer_to_gpu on @cpu_0 process(%images: {xb}, %labels: {yb}) {{')
        w(f'  %dev_images = l1.transfer %images : {xb} -> {xg}')
        w(f'  %dev_labels = l1.transfer %labels : {yb} -> {yg}')
        w(f'  l1.forward @forward_backward(%dev_images, %dev_labels) : {xg}, {yg}')
    else:
        w(f'  l1.forward @forward_backward(%images, %labels) : {xb}, {yb}')
    w('}')
    w('')
    host = 'transfer_grads' if gpu else 'report_and_send'
    w(f'l1.tensor_graph @forward_backward on @{dev} reads [{WIN}] then @{host}')
    w(f'    compute(%x: {x.ty()}, %y: {y.ty()}) {{')
    L.extend(g.lines)
    w('}')
    w('')
    outb = [buf(devmem, v.shape) for v in outs]
    names = ['%loss'] + ['%g_' + n for n, _, _ in PARAMS] + ['%correct']
    w(f'l1.stage @{host} on @cpu_0 process(' +
      ',\n    '.join(f'{n}: {t}' for n, t in zip(names, outb)) + ') {')
    scalar = buf('ram_0', ())
    for what, v, t in [('loss', names[0], outb[0]), ('correct', names[-1], outb[-1])]:
        if gpu:
            w(f'  %host_{what} = l1.transfer {v} : {t} -> {scalar}')
            v = f'%host_{what}'
        w(f'  l1.report "{what}", {v} : {scalar}')
        w(f'  l1.drop {v} : {scalar}')
    w('  l1.send @model_state::@GradUpdate(' + ', '.join(names[1:-1]) + ')\n      : ' +
      ',\n        '.join(outb[1:-1]))
    w('  l1.end')
    w('}')
    w('')
    if gpu:
        w('l1.pipeline @train = @load_data -> @transfer_to_gpu -> @forward_backward')
    else:
        w('l1.pipeline @train = @load_data -> @forward_backward')
    w(f'l1.pipeline @grad_return = @{host}')
    w('')
    w('l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 2')
    text = '\n'.join(L) + '\n'
    text = (text.replace('@DECAY@', str(TOTAL_STEPS - WARMUP))
                .replace('@TOTAL@', str(TOTAL_STEPS))
                .replace('@EPOCHS@', str(TOTAL_STEPS // 468)))
    open(path, 'w').write(text)
    return g, h, x, y, outs, gs

if __name__ == '__main__':
    # mnist.py OUT [--system single_gpu|single_cpu] [--epochs N (default 10)]
    args = sys.argv[1:]
    system = 'single_gpu'
    if '--system' in args:
        k = args.index('--system')
        system = args[k + 1] if k + 1 < len(args) else ''
        del args[k:k + 2]
    if '--epochs' in args:
        # The cosine's horizon: the schedule decays to 0 at the end of a run
        # of this many epochs (as the PyTorch peer's schedule does).
        k = args.index('--epochs')
        TOTAL_STEPS = 468 * int(args[k + 1])
        del args[k:k + 2]
    if len(args) != 1 or system not in SYSTEMS:
        sys.exit('usage: mnist.py OUT.l1.mlir [--system single_gpu|single_cpu] [--epochs N]')
    emit(args[0], system)
