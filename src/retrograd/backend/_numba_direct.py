"""The numba kernels of direct convolution (:mod:`..ops._conv_direct`): each output value is
the sum, over the kernel's taps (input channel, row, column), of a weight times a value of
the zero-padded input planes, read in place.

For a layer of few input channels im2col's GEMM has an inner dimension of the taps alone
(a first layer's 27), which OpenBLAS runs at a third of its speed, after copying the input
once per tap. Here a tile of four output channels by sixteen columns of one output row is
held in eight vector registers while the taps stream by: each tap loads two vectors of
input and four weights for eight fused multiply-adds (a depthwise convolution's channels
each load their own input: eight vectors a tap; outputs of 8 to 15 columns take tiles of
eight, at unit column stride a depthwise one's two output rows at a time; at a column
stride of 2 a depthwise tile loads sixteen values for eight and keeps the even lanes).
Written as numba loops, LLVM keeps such accumulators in memory (a load and a store per
multiply-add); so the tiles are LLVM IR, built by :func:`_tile_loop`: a loop carrying its
accumulators. The weight gradient's tile is four output channels by two taps, each a
vector of partial sums over about a thousand output positions (whole images; a row's last
columns by masked loads), the tiles' sums then added. A batch of small matrix products
is such a convolution, of one tap per inner index (:func:`matmuls`).
"""

import numpy
from llvmlite import ir
from numba import carray, types, uint64
from numba.extending import intrinsic

from ._numba_kernels import exact, float32_at, int64_at, jit, job


def _wide():
    """Whether numba compiles for AVX-512 here (its vectors of sixteen float32s): the
    machine's features, or those numba is told to target (``NUMBA_CPU_FEATURES``; a CPU
    named by ``NUMBA_CPU_NAME`` without them: not known, so not)."""
    from llvmlite import binding
    from numba.core import config
    if config.CPU_NAME and not config.CPU_FEATURES:
        return False
    features = config.CPU_FEATURES or binding.get_host_cpu_features().flatten()
    return "+avx512f" in features.split(",")


WIDE = _wide()
KB = 4  # output channels of a tile
XB = 2  # vectors of eight columns of a forward tile
QB = 2  # taps of a weight gradient tile
_POSITIONS = 1024  # output positions a weight gradient tile sums over, about
_F32, _I64 = ir.FloatType(), ir.IntType(64)
_V8 = ir.VectorType(_F32, 8)


def _const(v):
    return ir.Constant(_I64, v)


def _data(context, builder, signature, args, i):
    """The data pointer of array argument ``i``."""
    return context.make_array(signature.args[i])(context, builder, args[i]).data


def _load8(builder, data, at, lanes=8):
    """Eight (``lanes``) float32s at ``data[at:at + 8]`` as a vector (no alignment
    assumed)."""
    vector = ir.VectorType(_F32, lanes).as_pointer()
    return builder.load(builder.bitcast(builder.gep(data, [at]), vector), align=4)


def _store8(builder, value, data, at):
    builder.store(value, builder.bitcast(builder.gep(data, [at]), value.type.as_pointer()),
                  align=4)


def _splat(builder, value, element=_F32, lanes=8):
    """A vector of eight (``lanes``) copies of ``value`` (of type ``element``)."""
    undef = ir.Constant(ir.VectorType(element, lanes), ir.Undefined)
    one = builder.insert_element(undef, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, undef, ir.Constant(
        ir.VectorType(ir.IntType(32), lanes), [0] * lanes))


def _masked8(builder, data, at, mask):
    """``data[at:at + 8]`` where ``mask`` (8 x i1) is set, 0 elsewhere: no lane outside it
    is read."""
    module = builder.module
    bits = ir.VectorType(ir.IntType(1), 8)
    name = "llvm.masked.load.v8f32.p0v8f32"
    load = module.globals.get(name) or ir.Function(module, ir.FunctionType(
        _V8, [_V8.as_pointer(), ir.IntType(32), bits, _V8]), name)
    pointer = builder.bitcast(builder.gep(data, [at]), _V8.as_pointer())
    return builder.call(load, [pointer, ir.Constant(ir.IntType(32), 4), mask,
                               ir.Constant(_V8, [0.0] * 8)])


def _fma(builder, lanes=8):
    """LLVM's vector fused multiply-add (llvmlite's ``fma`` takes scalars only)."""
    module, vector, name = builder.module, ir.VectorType(_F32, lanes), f"llvm.fma.v{lanes}f32"
    return module.globals.get(name) or ir.Function(
        module, ir.FunctionType(vector, [vector] * 3), name)


def _tile_loop(builder, count, state, accumulators, step):
    """``count`` (at least 1) iterations of ``step(state, accumulators)``, which returns
    the next (state, accumulators): LLVM values carried by phi nodes, so the accumulators
    stay in registers. Returns the accumulators after the last iteration."""
    before = builder.block
    loop = builder.append_basic_block("tile")
    after = builder.append_basic_block("tile_done")
    builder.branch(loop)
    builder.position_at_end(loop)
    i = builder.phi(_I64)
    carried = [builder.phi(v.type) for v in state + accumulators]
    for phi, v in zip(carried, state + accumulators, strict=True):
        phi.add_incoming(v, before)
    i.add_incoming(_const(0), before)
    new_state, new_acc = step(carried[:len(state)], carried[len(state):])
    end = builder.block
    nxt = builder.add(i, _const(1))
    i.add_incoming(nxt, end)
    for phi, v in zip(carried, new_state + new_acc, strict=True):
        phi.add_incoming(v, end)
    builder.cbranch(builder.icmp_signed("<", nxt, count), loop, after)
    builder.position_at_end(after)
    return new_acc


def _input_rows(builder, signature, args, i):
    """The input offsets of a tile's KB output channels from argument ``i``: one shared
    offset (an int: a convolution's channels read the same input), or (offset, step), each
    channel reading the input ``step`` further (a depthwise one's, each its own plane)."""
    if not isinstance(signature.args[i], types.BaseTuple):
        return [args[i]] * KB
    start, step = (builder.extract_value(args[i], j) for j in range(2))
    return [builder.add(start, builder.mul(step, _const(m))) for m in range(KB)]


def _loaded(builder, data, starts, at, mask=None, lanes=8):
    """Vectors at ``starts[m] + at`` for each channel m, a load each where the starts
    differ, one load where they are the same value; with ``mask``, masked loads."""
    seen = {}
    for s in starts:
        if id(s) not in seen:
            seen[id(s)] = (_load8(builder, data, builder.add(s, at), lanes) if mask is None
                           else _masked8(builder, data, builder.add(s, at), mask))
    return [seen[id(s)] for s in starts]


_I32X8 = ir.VectorType(ir.IntType(32), 8)
_EVEN = ir.Constant(_I32X8, list(range(0, 16, 2)))


def _strided(builder, data, starts, at, sw, masks=None, lanes=8):
    """:func:`_loaded` at a column stride ``sw`` of 1 or 2: at 2, the 16 values from ``at``
    as two vectors and their even lanes kept (with ``masks``, a pair, masked loads)."""
    if sw == 1:
        return _loaded(builder, data, starts, at, masks and masks[0], lanes)
    low = _loaded(builder, data, starts, at, masks and masks[0])
    high = _loaded(builder, data, starts, builder.add(at, _const(8)), masks and masks[1])
    return [builder.shuffle_vector(a, b, _EVEN) for a, b in zip(low, high, strict=True)]


def _forward_tile(vectors, sw, x, xat, offs, w, wat, bias, k0, out, oat, ostep, steps=None,
                  lanes=8):
    """The signature and code of a forward tile ``vectors`` vectors of 8 (``lanes``)
    columns wide, reading its input at a column stride ``sw`` of 1 or 2; with ``steps``
    (the input's and the output's row steps), of two output rows, each tap's weights
    loaded once for both."""
    sig = types.void(x, xat, offs, w, wat, bias, k0, out, oat, ostep,
                     *(() if steps is None else (steps,)))

    def codegen(context, builder, signature, args):
        xd, od, wd, bd, outd = (_data(context, builder, signature, args, i)
                                for i in (0, 2, 3, 5, 7))
        wat_, k0_, oat_, ostep_ = args[4], args[6], args[8], args[9]
        starts = _input_rows(builder, signature, args, 1)
        taps = builder.extract_value(
            context.make_array(signature.args[2])(context, builder, args[2]).shape, 0)
        fma = _fma(builder, lanes)
        # a block of 8 columns: (its input's offset, its output's) from the tile's first
        blocks = [(_const(lanes * sw * b), _const(lanes * b)) for b in range(vectors)]
        if steps is not None:
            x_row, o_row = (builder.extract_value(args[10], i) for i in range(2))
            blocks += [(builder.add(x_row, xo), builder.add(o_row, oo)) for xo, oo in blocks]
        init = [_splat(builder, builder.load(builder.gep(bd, [builder.add(k0_, _const(m))])),
                       lanes=lanes) for m in range(KB) for _ in blocks]
        tap = None  # (the weights of a row: one after another, or ``tap`` apart)
        if isinstance(signature.args[4], types.BaseTuple):  # (first, row step, tap step)
            first, wstep, tap = (builder.extract_value(wat_, i) for i in range(3))
            rows = [builder.add(first, builder.mul(wstep, _const(m))) for m in range(KB)]
        else:  # rows of T weights each
            rows = [builder.add(wat_, builder.mul(taps, _const(m))) for m in range(KB)]

        def step(state, acc):
            q, = state
            at = builder.load(builder.gep(od, [q]))
            xs = [_strided(builder, xd, starts, builder.add(at, xo), sw, lanes=lanes)
                  for xo, _ in blocks]
            wq = q if tap is None else builder.mul(q, tap)
            ws = [_splat(builder, builder.load(builder.gep(wd, [builder.add(r, wq)])),
                         lanes=lanes) for r in rows]
            return [builder.add(q, _const(1))], [
                builder.call(fma, [ws[m], xs[b][m], acc[m * len(blocks) + b]])
                for m in range(KB) for b in range(len(blocks))]
        acc = _tile_loop(builder, taps, [_const(0)], init, step)
        for m in range(KB):
            row = builder.add(oat_, builder.mul(ostep_, _const(m)))
            for b, (_, oo) in enumerate(blocks):
                _store8(builder, acc[m * len(blocks) + b], outd, builder.add(row, oo))
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def forward_tile(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """``out[oat + m * ostep + z] = bias[k0 + m] + sum over taps q of w[wat + m * T + q]
    * x[xat_m + offs[q] + z]`` for m < KB, z < 8 * XB, T = ``offs.size``: ``xat_m`` is
    ``xat``, or ``xat[0] + m * xat[1]`` where it is a pair (:func:`_input_rows`)."""
    return _forward_tile(XB, 1, x, xat, offs, w, wat, bias, k0, out, oat, ostep)


@intrinsic
def forward_tile8(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """:func:`forward_tile` 8 columns wide, for outputs of 8 to 15 columns."""
    return _forward_tile(1, 1, x, xat, offs, w, wat, bias, k0, out, oat, ostep)


@intrinsic
def forward_tile8x2(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep, steps):
    """:func:`forward_tile8` on two output rows, the second ``steps`` = (input row step,
    output row step) further: eight accumulators where one row's four wait on each fused
    multiply-add's latency (ConvNeXt's 7x7 depthwise convolution on 14x14 maps)."""
    return _forward_tile(1, 1, x, xat, offs, w, wat, bias, k0, out, oat, ostep, steps)


@intrinsic
def forward_tile_s2(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """:func:`forward_tile` reading the input at a column stride of 2 (output column z from
    input column 2 z: 32 columns read, the odd ones not used)."""
    return _forward_tile(XB, 2, x, xat, offs, w, wat, bias, k0, out, oat, ostep)


@intrinsic
def forward_tile8_s2(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """:func:`forward_tile8` at a column stride of 2."""
    return _forward_tile(1, 2, x, xat, offs, w, wat, bias, k0, out, oat, ostep)


@intrinsic
def forward_tile32(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """:func:`forward_tile` 32 columns wide: sixteen accumulators, each tap's four weights
    feeding sixteen fused multiply-adds (a product of small matrices: :func:`matmuls`)."""
    return _forward_tile(2 * XB, 1, x, xat, offs, w, wat, bias, k0, out, oat, ostep)


@intrinsic
def forward_tile64w(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """:func:`forward_tile32` in AVX-512's vectors of sixteen: 64 columns, sixteen
    accumulators (:func:`matmuls` where the machine has them)."""
    return _forward_tile(4, 1, x, xat, offs, w, wat, bias, k0, out, oat, ostep, lanes=16)


@intrinsic
def forward_tile32w(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """:func:`forward_tile64w` 32 columns wide."""
    return _forward_tile(2, 1, x, xat, offs, w, wat, bias, k0, out, oat, ostep, lanes=16)


@intrinsic
def forward_tile16w(typingctx, x, xat, offs, w, wat, bias, k0, out, oat, ostep):
    """:func:`forward_tile64w` 16 columns wide."""
    return _forward_tile(1, 1, x, xat, offs, w, wat, bias, k0, out, oat, ostep, lanes=16)


def _weight_grad_tile(sw, g, gat, gsteps, x, xat, xat2, size, skips, part):
    """The signature and code of a weight gradient tile reading the input at a column
    stride ``sw`` of 1 or 2."""
    sig = types.void(g, gat, gsteps, x, xat, xat2, size, skips, part)

    def codegen(context, builder, signature, args):
        gd, xd, pd = (_data(context, builder, signature, args, i) for i in (0, 3, 8))
        gat_ = args[1]
        gstep_, gimage = (builder.extract_value(args[2], i) for i in range(2))
        images, rows, vectors, tail = (builder.extract_value(args[6], i) for i in range(4))
        skip, image_skip = (builder.extract_value(args[7], i) for i in range(2))
        fma = _fma(builder)
        zero = ir.Constant(_V8, [0.0] * 8)
        gs = [builder.add(gat_, builder.mul(gstep_, _const(m))) for m in range(KB)]
        starts = [_input_rows(builder, signature, args, i) for i in (4, 5)]
        g_row = builder.add(builder.mul(vectors, _const(8)), tail)  # a gradient row: OW
        lanes = ir.Constant(_I32X8, list(range(8)))

        def below(n):
            """The lanes (of 8) under ``n`` (an int32 vector's lanes), as a mask."""
            return builder.icmp_signed("<", lanes, n)
        tail32 = _splat(builder, builder.trunc(tail, ir.IntType(32)), ir.IntType(32))
        mask = below(tail32)
        if sw == 2:  # the tail's input: its 2 tail - 1 first values, in two vectors
            used = builder.sub(builder.add(tail32, tail32), ir.Constant(_I32X8, [1] * 8))
            x_masks = (below(used), below(builder.sub(used, ir.Constant(_I32X8, [8] * 8))))
        else:
            x_masks = (mask,)
        has_tail = builder.icmp_signed(">", tail, _const(0))
        g_back = builder.mul(g_row, builder.sub(rows, _const(1)))  # an image's rows but one
        x_row = builder.add(g_row, skip)  # a row of the input planes

        def vector(state, acc):
            """One vector of a row: (gradient, input) offsets, the next."""
            g_off, x_off = state
            gv = [_load8(builder, gd, builder.add(r, g_off)) for r in gs]
            xv = [_strided(builder, xd, s, x_off, sw) for s in starts]
            return ([builder.add(g_off, _const(8)), builder.add(x_off, _const(8 * sw))],
                    [builder.call(fma, [gv[m], xv[p][m], acc[m * QB + p]])
                     for m in range(KB) for p in range(QB)])

        def row(state, acc):
            """One output row (the inner loop: its vectors); the next row's offsets, or
            the next image's first row's."""
            g_off, x_off, r = state
            acc = _tile_loop(builder, vectors, [g_off, x_off], acc, vector)
            end = builder.mul(vectors, _const(8))
            before = builder.block
            with builder.if_then(has_tail):
                at = builder.add(x_off, builder.mul(end, _const(sw)))
                gv = [_masked8(builder, gd, builder.add(builder.add(q, g_off), end), mask)
                      for q in gs]
                xv = [_strided(builder, xd, s, at, sw, x_masks) for s in starts]
                tailed = [builder.call(fma, [gv[m], xv[p][m], acc[m * QB + p]])
                          for m in range(KB) for p in range(QB)]
                inside = builder.block
            merged = []
            for a, t in zip(acc, tailed, strict=True):
                phi = builder.phi(_V8)
                phi.add_incoming(t, inside)
                phi.add_incoming(a, before)
                merged.append(phi)
            acc = merged
            r1 = builder.add(r, _const(1))
            image_done = builder.icmp_signed("==", r1, rows)
            g_next = builder.add(g_off, builder.select(image_done, builder.sub(gimage, g_back),
                                                       g_row))
            x_next = builder.add(x_off, builder.select(image_done, image_skip, x_row))
            return [g_next, x_next, builder.select(image_done, _const(0), r1)], acc
        acc = _tile_loop(builder, builder.mul(images, rows), [_const(0)] * 3,
                         [zero] * (KB * QB), row)
        for i, a in enumerate(acc):
            _store8(builder, a, pd, _const(8 * i))
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def weight_grad_tile(typingctx, g, gat, gsteps, x, xat, xat2, size, skips, part):
    """``part[8 (m QB + p) + lane]``: lane ``lane`` of the sum, over ``size`` = (images,
    rows, vectors, tail) of output positions (a row: its vectors of 8 columns, then
    ``tail`` columns more), of the gradient ``g`` of output channel m (its planes from
    ``gat + m * gsteps[0]``, images ``gsteps[1]`` apart) times the input under tap p (from
    ``xat`` for p = 0, ``xat2`` for p = 1, each an offset or a pair, as
    :func:`forward_tile`'s ``xat``). ``skips`` = (the input's row length less the
    output's, the step from an image's last row to the next image's first). Two loops:
    the rows, and in each its vectors, whose loop only adds to two offsets; a row's tail
    is read by masked loads, its other lanes zeros (and no product of them)."""
    return _weight_grad_tile(1, g, gat, gsteps, x, xat, xat2, size, skips, part)


@intrinsic
def weight_grad_tile_s2(typingctx, g, gat, gsteps, x, xat, xat2, size, skips, part):
    """:func:`weight_grad_tile` reading the input at a column stride of 2 (output column z
    under input column 2 z; the tail's masked loads read up to the last value used)."""
    return _weight_grad_tile(2, g, gat, gsteps, x, xat, xat2, size, skips, part)


@jit
def _starts(n, step):
    """Tile starts 0, step, ... covering ``n`` (at least ``step``), the last moved back to
    end at ``n``: it computes again some values of the one before, the same way."""
    out = numpy.empty(-(-n // step), numpy.int64)
    for i in range(out.size):
        out[i] = min(i * step, n - step)
    return out


@jit
def forward(x, offs, w, bias, out, r0, r1, plane, wp, k, oh, ow, own, sh, sw):
    """Output rows ``r0:r1`` (counted over images, then rows) of ``out`` (N, K, OH, OW),
    flat: ``x`` holds the padded input planes (N, C, hp, wp), ``w`` the weights (K, T)
    and ``offs`` the taps' offsets in an image's planes; K >= KB, OW >= 8 (tiles of 8 XB
    columns from OW = 8 XB, of 8 below). ``own``: a depthwise convolution's, output
    channel k's taps at ``offs + k * own`` (its own input planes); 0 for the others.
    Output row y, column z reads the planes from row y ``sh``, column z ``sw``: 1, or 2
    for a depthwise convolution's."""
    taps = offs.size
    wide = ow >= 8 * XB
    ks, xs = _starts(k, KB), _starts(ow, 8 * XB if wide else 8)
    r = r0
    while r < r1:
        n, y = r // oh, r % oh
        # a depthwise convolution's narrow tiles at unit column stride two rows at a time,
        # in the image and the part (another convolution's tiles share each tap's load, and
        # ``_conv_direct.applies`` sends one here only from 16 columns: wide tiles)
        two = own and not wide and sw == 1 and y + 1 < oh and r + 1 < r1
        for k0 in ks:
            for x0 in xs:
                at = n * plane + k0 * own + y * sh * wp + x0 * sw
                o = ((n * k + k0) * oh + y) * ow + x0
                if two:
                    forward_tile8x2(x, (at, own), offs, w, k0 * taps, bias, k0, out, o,
                                    oh * ow, (sh * wp, ow))
                elif sw == 2 and wide:
                    forward_tile_s2(x, (at, own), offs, w, k0 * taps, bias, k0, out, o, oh * ow)
                elif sw == 2:
                    forward_tile8_s2(x, (at, own), offs, w, k0 * taps, bias, k0, out, o,
                                     oh * ow)
                elif own and wide:
                    forward_tile(x, (at, own), offs, w, k0 * taps, bias, k0, out, o, oh * ow)
                elif own:
                    forward_tile8(x, (at, own), offs, w, k0 * taps, bias, k0, out, o, oh * ow)
                elif wide:
                    forward_tile(x, at, offs, w, k0 * taps, bias, k0, out, o, oh * ow)
                else:
                    forward_tile8(x, at, offs, w, k0 * taps, bias, k0, out, o, oh * ow)
        r += 2 if two else 1


@jit
def weight_grad(g, x, offs, dw, k_lo, k_hi, n, plane, wp, k, oh, ow, own, sh, sw):
    """``dw[m, q]`` (K, T), flat, for output channels ``k_lo:k_hi``: the sum of ``g`` (N, K,
    OH, OW) times the input under tap q (``x``, the padded planes; ``own``, ``sh`` and
    ``sw`` as :func:`forward`'s); K >= KB, T >= QB, OW >= 8. Each tile sums over whole
    images, ``_POSITIONS`` output positions or fewer (a lane an eighth of them: a sum short
    enough to round as a GEMM's), and the tiles' sums are added."""
    taps = offs.size
    qs = _starts(taps, QB)
    per = max(1, _POSITIONS // (oh * ow))  # images a tile sums over
    part = numpy.empty(KB * QB * 8, numpy.float32)
    total = numpy.empty((qs.size, KB * QB * 8), numpy.float32)
    skips = (sh * wp - ow, plane - (oh - 1) * sh * wp)
    for k0 in _starts(k_hi - k_lo, KB) + k_lo:
        total[:] = 0
        for i in range(0, n, per):
            size = (min(per, n - i), oh, ow // 8, ow % 8)
            gat, gsteps = (i * k + k0) * oh * ow, (oh * ow, k * oh * ow)
            for j in range(qs.size):
                base = i * plane + k0 * own
                a, b = base + offs[qs[j]], base + offs[qs[j] + 1]
                if sw == 2:
                    weight_grad_tile_s2(g, gat, gsteps, x, (a, own), (b, own), size, skips,
                                        part)
                elif own:
                    weight_grad_tile(g, gat, gsteps, x, (a, own), (b, own), size, skips, part)
                else:
                    weight_grad_tile(g, gat, gsteps, x, a, b, size, skips, part)
                total[j] += part
        for j in range(qs.size):
            for m in range(KB):
                for p in range(QB):
                    s = numpy.float32(0)
                    for lane in range(8):
                        s += total[j, 8 * (m * QB + p) + lane]
                    dw[(k0 + m) * taps + qs[j] + p] = s


@jit
def matmuls(a, b, offs, zero, out, z0, z1, m, n, h, steps):
    """``out[z] = a[z] @ b[z]`` for z in ``z0:z1`` of Z = (Z // h) x h products: ``a``
    (Z, M, K), ``b`` (Z, K, N) and ``out`` (Z, M, N) flat views of their memory, product
    z = (zb, zh) starting at ``zb * steps[0] + zh * steps[1]`` of ``a`` (``steps[2:4]``
    of ``b``, ``steps[4:6]`` of ``out``), rows ``steps[6]`` and inner indices ``steps[7]``
    apart in ``a`` (a transposed one is read in place), ``offs[q]``
    in ``b`` (``offs`` = arange(K) times its row step), N in ``out``; ``zero`` four
    zeros; M >= KB, N >= 8. A matrix product is a convolution of one tap per inner index:
    output channel i, column j sums a[z, i, q] * b[z, q, j] over taps q, each output by
    one fused multiply-add per tap in order (OpenBLAS's own order in its 16-column
    kernels, not at a row's last columns). Columns in tiles of 32, then 16, then 8, the
    last moved back to end at N; where numba compiles for AVX-512 (``WIDE``), in its
    vectors of sixteen: tiles of 64, 32 and 16 (N >= 16), the same sums."""
    for z in range(z0, z1):
        zb, zh = z // h, z % h
        xat = zb * steps[2] + zh * steps[3]
        for i0 in _starts(m, KB):
            wat = (zb * steps[0] + zh * steps[1] + i0 * steps[6], steps[6], steps[7])
            oat = zb * steps[4] + zh * steps[5] + i0 * n
            j = 0
            if WIDE and n >= 16:
                while j + 64 <= n:
                    forward_tile64w(b, xat + j, offs, a, wat, zero, 0, out, oat + j, n)
                    j += 64
                if j + 32 <= n:
                    forward_tile32w(b, xat + j, offs, a, wat, zero, 0, out, oat + j, n)
                    j += 32
                while j < n:
                    j = min(j, n - 16)
                    forward_tile16w(b, xat + j, offs, a, wat, zero, 0, out, oat + j, n)
                    j += 16
                continue
            while j + 32 <= n:
                forward_tile32(b, xat + j, offs, a, wat, zero, 0, out, oat + j, n)
                j += 32
            if j + 16 <= n:
                forward_tile(b, xat + j, offs, a, wat, zero, 0, out, oat + j, n)
                j += 16
            while j < n:
                j = min(j, n - 8)
                forward_tile8(b, xat + j, offs, a, wat, zero, 0, out, oat + j, n)
                j += 8


@exact
def phase_planes(x, out, phases, c0, c1, stride, pad):
    """``out[n, p C + c, u, v]``: the padded input's value at row ``a + u sh``, column ``b +
    v sw`` (0 outside ``x``) for each phase ``(a, b) = phases[p]`` and channel c of
    ``c0:c1``; every value of ``out`` written once (it may be uninitialized memory)."""
    c, h, w = x.shape[1], x.shape[2], x.shape[3]
    hq, wq = out.shape[2], out.shape[3]
    (sh, sw), (ph, pw) = stride, pad
    for p in range(phases.shape[0]):
        a, b = phases[p, 0], phases[p, 1]
        # the phase's columns v inside the input: 0 <= b + v sw - pw < w
        v0, v1 = max(0, -((b - pw) // sw)), min(wq, -((b - pw - w) // sw))
        for n in range(x.shape[0]):
            for ci in range(c0, c1):
                plane = out[n, p * c + ci]
                for u in range(hq):
                    row = plane[u]
                    y = a + u * sh - ph
                    if 0 <= y < h and v0 < v1:
                        src = x[n, ci, y]
                        for v in range(v0):
                            row[v] = 0
                        for v in range(v0, v1):
                            row[v] = src[b + v * sw - pw]
                        for v in range(v1, wq):
                            row[v] = 0
                    else:
                        for v in range(wq):
                            row[v] = 0


@job
def phase_planes_job(p):
    """[x, out, phases, N, C, S, c0, c1, H, W, P, hq, wq, sh, sw, ph, pw]"""
    j = carray(p, 17)
    n, c, h, w, count, hq, wq = j[3], j[4], j[8], j[9], j[10], j[11], j[12]
    phase_planes(carray(float32_at(j[0]), (n, c, h, w)),
                 carray(float32_at(j[1]), (n, count * c, hq, wq)),
                 carray(int64_at(j[2]), (count, 2)), j[6], j[7], (j[13], j[14]), (j[15], j[16]))


@exact
def interleave_columns(dx, even, odd, c0, c1, a, sh, ph, pw, u0, rows):
    """``dx[n, ci, a + u sh - ph, x]`` = ``even`` (x + pw even) or ``odd``'s ``[n, ci, u, (x
    + pw) // 2]`` for channels ``c0:c1`` and rows u of ``u0:u0 + rows``: a depthwise input
    gradient's row phase from its two column phases at a stride of 2, every value of those
    rows written once, in order (the indices unsigned: LLVM then vectorizes the pairs,
    where a copy into each phase's strided view ran at 0.75 ns a value)."""
    h, w = dx.shape[2], dx.shape[3]
    wv = even.shape[3]
    first = (pw + 1) // 2  # the first pair (v: columns 2 v - pw and 2 v + 1 - pw) inside
    last = max(first, (w + pw - 1) // 2)  # the pairs inside end here
    one, pw_ = uint64(1), uint64(pw)
    for n in range(dx.shape[0]):
        for ci in range(c0, c1):
            plane, e, o = (dx[n, ci].reshape(h * w), even[n, ci].reshape(-1),
                           odd[n, ci].reshape(-1))
            for r in range(rows):
                u = u0 + r
                at, vat = uint64((a + u * sh - ph) * w), uint64(u * wv)
                if pw % 2:
                    plane[at] = o[vat + uint64(pw // 2)]
                for v in range(uint64(first), uint64(last)):
                    x = at + uint64(2) * v - pw_
                    plane[x] = e[vat + v]
                    plane[x + one] = o[vat + v]
                for x in range(uint64(2 * last - pw), uint64(w)):
                    q = x + pw_
                    plane[at + x] = o[vat + (q >> one)] if q & one else e[vat + (q >> one)]


@job
def interleave_columns_job(p):
    """[dx, even, odd, N, C, S, c0, c1, H, W, U, V, a, sh, ph, pw, u0, rows]"""
    j = carray(p, 18)
    n, c, h, w, hu, wv = j[3], j[4], j[8], j[9], j[10], j[11]
    interleave_columns(carray(float32_at(j[0]), (n, c, h, w)),
                       carray(float32_at(j[1]), (n, c, hu, wv)),
                       carray(float32_at(j[2]), (n, c, hu, wv)), j[6], j[7], j[12], j[13],
                       j[14], j[15], j[16], j[17])


@job
def forward_job(p):
    """[x, offs, w, bias, out, r0, r1, N, C, hp, wp, K, OH, OW, T, own, sh, sw]"""
    j = carray(p, 18)
    n, c, hp, wp, k, oh, ow, taps = j[7], j[8], j[9], j[10], j[11], j[12], j[13], j[14]
    forward(carray(float32_at(j[0]), n * c * hp * wp), carray(int64_at(j[1]), taps),
            carray(float32_at(j[2]), k * taps), carray(float32_at(j[3]), k),
            carray(float32_at(j[4]), n * k * oh * ow), j[5], j[6], c * hp * wp, wp, k, oh, ow,
            j[15], j[16], j[17])


@job
def weight_grad_job(p):
    """[g, x, offs, dw, k_lo, k_hi, N, C, hp, wp, K, OH, OW, T, own, sh, sw]"""
    j = carray(p, 17)
    n, c, hp, wp, k, oh, ow, taps = j[6], j[7], j[8], j[9], j[10], j[11], j[12], j[13]
    weight_grad(carray(float32_at(j[0]), n * k * oh * ow),
                carray(float32_at(j[1]), n * c * hp * wp), carray(int64_at(j[2]), taps),
                carray(float32_at(j[3]), k * taps), j[4], j[5], n, c * hp * wp, wp, k, oh, ow,
                j[14], j[15], j[16])


@job
def matmuls_job(p):
    """[a, b, offs, zero, out, z0, z1, M, K, N, H, a's, b's and out's extents (elements),
    8 steps (:func:`matmuls`)]"""
    j = carray(p, 22)
    m, k, n = j[7], j[8], j[9]
    matmuls(carray(float32_at(j[0]), j[11]), carray(float32_at(j[1]), j[12]),
            carray(int64_at(j[2]), k), carray(float32_at(j[3]), KB),
            carray(float32_at(j[4]), j[13]), j[5], j[6], m, n, j[10], j[14:22])


JOBS = {"direct_conv": forward_job.address, "direct_conv_dw": weight_grad_job.address,
        "matmuls": matmuls_job.address,
        "phase_planes": phase_planes_job.address,
        "interleave_columns": interleave_columns_job.address}
