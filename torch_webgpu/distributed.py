"""torch.distributed for webgpu tensors: the ``"webgpu"`` process-group backend.

WebGPU has no device-to-device transport, so collectives stage through host memory into gloo (the
one backend every PyTorch build has): webgpu operands are copied to the CPU, gloo runs the
collective between the processes, and the results are copied back into the webgpu tensors. CPU
tensors go to gloo unchanged, so one group serves both (``backend="webgpu"`` or a device map such as
``"cpu:gloo,webgpu:webgpu"``). DDP, ``torchrun`` and the functional collectives run unchanged:

    torch.distributed.init_process_group("webgpu")   # or "cpu:gloo,webgpu:webgpu"
    model = DistributedDataParallel(model.to("webgpu"))

Each collective completes before it returns (the returned Work is already done); the copies are
in the same order as the device's other work, so a later op sees the reduced values. The exception:
all-reduces started during a backward pass (DDP's buckets) finish later, overlapped with the rest of
the backward pass, and all before it returns (``_Deferred``).
docs/design.md, "Several processes", says how this maps onto c10d.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import os
import socket
import uuid

import torch

_NAME = "webgpu"


def _dist():
    import torch.distributed as dist

    return dist


def _on_device(t: torch.Tensor) -> bool:
    return t.device.type == _NAME


def _host(t: torch.Tensor) -> torch.Tensor:
    """The CPU operand gloo sees: a contiguous copy of a webgpu tensor, a CPU tensor itself."""
    if not _on_device(t):
        return t
    return t.detach().to("cpu").contiguous()


def _hosts(ts):
    return [_host(t) for t in ts]


def _copy_back(dsts, srcs):
    for d, s in zip(dsts, srcs):
        if d is not s:
            with torch.no_grad():
                d.copy_(s)


def _done(result):
    from torch._C._distributed_c10d import _create_work_from_future

    fut = torch.futures.Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


def _is_avg(op) -> bool:
    dist = _dist()
    return op == dist.ReduceOp.AVG


# Reduce ops of the shared-memory path, as ``fn(a, b, out)`` on the device.
_SHM_OPS = {
    "SUM": lambda a, b, out: torch.add(a, b, out=out),
    "MAX": lambda a, b, out: torch.maximum(a, b, out=out),
    "MIN": lambda a, b, out: torch.minimum(a, b, out=out),
    "PRODUCT": lambda a, b, out: torch.mul(a, b, out=out),
}


def _reduce_into(t: torch.Tensor, xs, op_name: str) -> None:
    """t = xs[0] op xs[1] op ... in rank order (xs holds t itself at this rank's place), so every
    rank computes the same bits. Only t and scratch tensors are written: the other operands may be
    another rank's shared memory."""
    op = _SHM_OPS[op_name]
    acc = xs[0]
    with torch.no_grad():
        for x in xs[1:]:
            out = acc if (acc is t or acc is not xs[0]) else (t if x is t else torch.empty_like(t))
            op(acc, x, out)
            acc = out
        if acc is not t:
            t.copy_(acc)


def _importing(device: torch.device) -> bool:
    """Whether shared memory serves as device buffers on this device (Dawn's host-mapped-pointer
    feature; ``TORCH_WEBGPU_DIST_IMPORT=0`` turns it off): then the GPU copies an operand into
    shared memory and reads the other ranks' operands from there, with no staging copies."""
    if os.environ.get("TORCH_WEBGPU_DIST_IMPORT", "1") == "0":
        return False
    from torch_webgpu import _C

    return _C._host_import_alignment(device.index if device.index is not None else -1) > 0


def _min_opts():
    o = torch._C._distributed_c10d.AllreduceOptions()
    o.reduceOp = _dist().ReduceOp.MIN
    return o


def _pages(nbytes: int) -> int:
    """nbytes rounded up to 64 KiB: a size the devices can import (a multiple of their alignment)."""
    return -(-nbytes // 65536) * 65536


def _mark(device: torch.device) -> torch.Event:
    """An event after the work recorded so far (recording it submits that work)."""
    e = torch.Event(device=device)
    e.record()
    return e


class _SharedMemory:
    """All-reduce between the ranks of one host through shared memory instead of gloo's sockets.

    Every rank has two regions (files in /dev/shm, mapped by all ranks), used in turns by successive
    calls. A call: each rank copies its operand from the device into its region; barrier; each rank
    reduces all operands on its GPU in rank order (its own operand is already there), so every rank
    computes the same bits the same way. Where the device can use host memory as a buffer
    (``_importing``), the GPU writes the region and reads the other ranks' regions itself; else the
    operand goes through a staging copy and the others are uploaded. The host does no arithmetic.
    Regions alternate between calls, and a rank enters a call's barrier only once its GPU finished
    the copy into its region, which it recorded after its reads of the last call's regions: so a
    call's barrier also says that every rank is done with the regions the call after writes. One
    barrier per call. Regions grow (all ranks alike, since collectives have the same sizes on every
    rank) by mapping new files of a new generation.
    """

    def __init__(self, store, gloo, rank: int, size: int):
        self._store, self._gloo, self._rank, self._size = store, gloo, rank, size
        if rank == 0:
            store.set("webgpu_shm_id", uuid.uuid4().hex)
        self._id = store.get("webgpu_shm_id").decode()
        self._bytes = 0
        self._gen = 0
        self._turn = 0
        self._regions = []  # [turn][rank]
        self._aliases = {}  # (turn, rank, device) -> the region as a webgpu tensor
        self._tickets = 0  # _Imported tickets made (their files' names)
        self._barriers = 0
        self._unlink = []  # (barrier count after which every rank mapped it, path)
        self._imports = {}  # device -> whether every rank's device imports host memory

    def importing(self, device: torch.device) -> bool:
        """``_importing`` agreed by all ranks (the paths differ in which regions exist): asked at a
        device's first all-reduce, which every rank makes at the same point."""
        if device not in self._imports:
            flag = torch.tensor([int(_importing(device))])
            self._gloo.allreduce([flag], _min_opts()).wait()
            self._imports[device] = bool(flag.item())
        return self._imports[device]

    def _map(self, name: str, nbytes: int, create: bool) -> torch.Tensor:
        path = os.path.join("/dev/shm", name)
        if create:
            with open(path, "wb") as f:
                f.truncate(nbytes)
        return torch.from_file(path, shared=True, size=nbytes, dtype=torch.uint8)

    def _barrier(self):
        self._gloo.barrier().wait()
        self._barriers += 1
        while self._unlink and self._unlink[0][0] < self._barriers:
            os.unlink(self._unlink.pop(0)[1])

    def _grow(self, nbytes: int):
        nbytes = _pages(max(nbytes, 2 * self._bytes, 1 << 20))
        self._gen += 1
        base = f"torch_webgpu_{self._id}_{self._gen}"
        names = [[f"{base}_t{turn}_r{r}" for r in range(self._size)] for turn in range(2)]
        mine = [names[turn][self._rank] for turn in range(2)]
        for n in mine:
            self._map(n, nbytes, create=True)
        self._barrier()
        self._regions = [[self._map(n, nbytes, create=False) for n in row] for row in names]
        self._aliases = {}
        self._barrier()
        for n in mine:  # the mappings stay valid; no file outlives the process group
            os.unlink(os.path.join("/dev/shm", n))
        self._bytes = nbytes

    def _import(self, name: str, nbytes: int, device: torch.device, create: bool) -> torch.Tensor:
        """A /dev/shm file (made when create) as a webgpu tensor of the device."""
        from torch_webgpu import _C

        return _C._import_host(self._map(name, nbytes, create), device.index)

    def _alias(self, turn: int, r: int, device: torch.device) -> torch.Tensor:
        key = (turn, r, device)
        if key not in self._aliases:
            from torch_webgpu import _C

            self._aliases[key] = _C._import_host(self._regions[turn][r], device.index)
        return self._aliases[key]

    def allreduce(self, t: torch.Tensor, op_name: str, ticket=None) -> None:
        """ticket: a ``_Staged`` or ``_Imported`` started on t by ``_Deferred`` (the operand is then
        in the ticket's staging buffer or shared memory), else None: a call that runs now."""
        nbytes = t.numel() * t.element_size()
        if isinstance(ticket, _Imported):
            ticket.wait()
            self._barrier()
            _reduce_into(t, ticket.operands(t), op_name)
            return
        if ticket is None and self.importing(t.device):
            turn = self._publish(t)
            xs = [
                t if r == self._rank else self._peer(turn, r, t, 0, t.numel()).view(t.shape) for r in range(self._size)
            ]
            _reduce_into(t, xs, op_name)
            return
        if nbytes > self._bytes:
            self._grow(nbytes)
        turn = self._turn
        regions = self._regions[turn]
        self._turn ^= 1
        flat = t.reshape(-1)
        if ticket is None:
            regions[self._rank][:nbytes].view(t.dtype).copy_(flat)
        else:
            ticket.reader.finish(regions[self._rank][:nbytes])
        self._barrier()
        staged = ticket is not None and nbytes % 4 == 0
        xs = []
        for r in range(self._size):
            if r == self._rank:
                xs.append(t)
                continue
            x = torch.empty_like(t, memory_format=torch.contiguous_format)
            if staged:
                ticket.writers[r - (r > self._rank)].upload(x, regions[r][:nbytes])
            else:
                x.copy_(regions[r][:nbytes].view(t.dtype).view(t.shape))
            xs.append(x)
        _reduce_into(t, xs, op_name)

    def _publish(self, t: torch.Tensor) -> int:
        """The imported path's first half: copies contiguous t into this rank's region of the next
        turn, waits for the copy, then for the barrier; returns the turn."""
        nbytes = t.numel() * t.element_size()
        if nbytes > self._bytes:
            self._grow(nbytes)
        turn = self._turn
        self._turn ^= 1
        self._alias(turn, self._rank, t.device)[:nbytes].view(t.dtype).copy_(t.reshape(-1))
        _mark(t.device).synchronize()
        self._barrier()
        return turn

    def _peer(self, turn: int, r: int, like: torch.Tensor, start: int, count: int) -> torch.Tensor:
        """Elements [start, start + count) of rank r's region of this turn, as a device tensor of
        like's dtype."""
        es = like.element_size()
        return self._alias(turn, r, like.device)[start * es : (start + count) * es].view(like.dtype)

    def allgather(self, out: torch.Tensor, inp: torch.Tensor) -> None:
        """out (contiguous, world size x inp's elements) = every rank's inp in rank order (imported
        path)."""
        turn, n = self._publish(inp), inp.numel()
        flat = out.view(-1)
        with torch.no_grad():
            for r in range(self._size):
                src = inp.reshape(-1) if r == self._rank else self._peer(turn, r, inp, 0, n)
                flat[r * n : (r + 1) * n].copy_(src)

    def reduce_scatter(self, out: torch.Tensor, inp: torch.Tensor, op_name: str) -> None:
        """out (contiguous) = the reduction over ranks, in rank order, of the chunk of their inp that
        this rank keeps (imported path)."""
        turn, m = self._publish(inp), out.numel()
        start = self._rank * m
        flat = out.view(-1)
        with torch.no_grad():
            flat.copy_(inp.reshape(-1)[start : start + m])
        xs = [flat if r == self._rank else self._peer(turn, r, out, start, m) for r in range(self._size)]
        _reduce_into(flat, xs, op_name)

    def release(self):
        for _, path in self._unlink:
            with contextlib.suppress(OSError):
                os.unlink(path)
        self._unlink = []

    @staticmethod
    def usable(store, rank: int, size: int) -> bool:
        """True when every rank runs on this host and /dev/shm exists (agreed through the store);
        ``TORCH_WEBGPU_DIST_SHM=0`` turns it off."""
        ok = os.environ.get("TORCH_WEBGPU_DIST_SHM", "1") != "0" and os.path.isdir("/dev/shm")
        store.set(f"webgpu_shm_host_{rank}", f"{socket.gethostname()}|{int(ok)}")
        hosts = [store.get(f"webgpu_shm_host_{r}").decode() for r in range(size)]
        return size > 1 and all(h == hosts[0] for h in hosts) and hosts[0].endswith("|1")


class _Staged:
    """A deferred bucket's staging buffers: an asynchronous read of the operand and an upload per
    other rank (``_C._AsyncRead``/``_AsyncWrite``), for devices that cannot use host memory as a
    buffer."""

    def __init__(self, shm: _SharedMemory, nbytes: int, device: torch.device):
        from torch_webgpu import _C

        self.reader = _C._AsyncRead()
        self.writers = [_C._AsyncWrite() for _ in range(shm._size - 1)]

    def start(self, t: torch.Tensor):
        self.reader.start(t)

    def ready(self) -> bool:
        return self.reader.ready()


class _Imported:
    """A deferred bucket's own shared memory, used by the GPU directly (``_importing``): two regions
    per rank, in turns, each imported as a device buffer. ``start`` records the copy of the operand
    into this rank's region; after the barrier, the other ranks' regions are the reduction's
    operands, read by the GPU. Regions are per bucket because the copy is recorded before the
    barrier; they alternate because a bucket's next use begins (in the next backward pass) before
    the other ranks' GPUs are known to have read this use's region. They have: each rank enters a
    use's barrier only after its GPU finished that use's copy, which it recorded after its reads of
    the use before."""

    def __init__(self, shm: _SharedMemory, nbytes: int, device: torch.device):
        self._shm, self._device = shm, device
        shm._tickets += 1
        self._base = f"torch_webgpu_{shm._id}_k{shm._tickets}"
        self._size = _pages(nbytes)
        # [parity][rank]: the regions as webgpu tensors; the other ranks' are mapped at the first use
        self._regions = [[None] * shm._size for _ in range(2)]
        for p in range(2):
            self._regions[p][shm._rank] = shm._import(self._name(p, shm._rank), self._size, device, create=True)
        self._parity = 0
        self._event = None
        self._mapped = False

    def _name(self, parity: int, rank: int) -> str:
        return f"{self._base}_p{parity}_r{rank}"

    def start(self, t: torch.Tensor):
        nbytes = t.numel() * t.element_size()
        self._regions[self._parity][self._shm._rank][:nbytes].view(t.dtype).copy_(t.reshape(-1))
        self._event = _mark(t.device)

    def ready(self) -> bool:
        return self._event.query()

    def wait(self):
        """Before the barrier: waits for this rank's copy."""
        self._event.synchronize()

    def operands(self, t: torch.Tensor):
        """After the barrier: the reduction's operands in rank order. At the first use the other
        ranks' regions are mapped (their files exist once the barrier passed), and this rank's files
        are unlinked at the next barrier, by which every rank has mapped them."""
        shm, p, nbytes = self._shm, self._parity, t.numel() * t.element_size()
        self._parity ^= 1
        if not self._mapped:
            self._mapped = True
            for r in range(shm._size):
                for q in range(2):
                    if r != shm._rank:
                        self._regions[q][r] = shm._import(self._name(q, r), self._size, self._device, create=False)
                    else:
                        shm._unlink.append((shm._barriers, os.path.join("/dev/shm", self._name(q, r))))
        return [
            t if r == shm._rank else self._regions[p][r][:nbytes].view(t.dtype).view(t.shape) for r in range(shm._size)
        ]


class _Deferred:
    """All-reduces that DDP starts during the backward pass, finished later (docs/design.md,
    "Several processes"). A call records the copy of its bucket (into shared memory the GPU writes,
    ``_Imported``, or a staging buffer, ``_Staged``), which the GPU runs after the gradients
    recorded before it, and returns an unfinished future. The rest (the barrier between ranks, the
    reduction) runs for the oldest buckets whose copies are done at each later call, and for all
    that are left in a callback at the end of the backward pass (queued before DDP's own finalising
    callback, which waits on the futures). Meanwhile the GPU computes the rest of the backward pass.
    Every rank finishes the buckets in the same order, so their barriers pair up."""

    def __init__(self, shm: "_SharedMemory", avg):
        self._shm = shm
        self._avg = avg  # the group's AVG division, avg(tensors, is_avg)
        self._pending = collections.deque()  # (tensor, op name, is_avg, ticket, future), oldest first
        # Idle tickets by operand byte size: a bucket gets back staging of its own size, which the
        # last step's copies have long released. Tickets that a whole backward pass did not use
        # (DDP's first step buckets differently) are dropped.
        self._tickets = {}
        self._used = {}
        self._queued = False
        self.started = 0  # all-reduces deferred so far (tests)
        self.ready_early = 0  # of which finished at a later call, not at the end of the backward pass

    @staticmethod
    def possible() -> bool:
        """Inside a node of a running backward pass (an autograd hook), whose end callbacks are still
        to run; not inside those callbacks (DDP's static-graph first step reduces from there and
        waits at once)."""
        if os.environ.get("TORCH_WEBGPU_DIST_OVERLAP", "1") == "0":
            return False
        return torch._C._current_autograd_node() is not None

    def start(self, t: torch.Tensor, op_name: str, avg: bool):
        nbytes = t.numel() * t.element_size()
        kind = _Imported if self._shm.importing(t.device) else _Staged
        idle = self._tickets.get((nbytes, kind))
        ticket = idle.popleft() if idle else kind(self._shm, nbytes, t.device)
        ticket.start(t)
        fut = torch.futures.Future()
        self._pending.append((t, op_name, avg, ticket, fut))
        self.started += 1
        if not self._queued:
            torch.autograd.Variable._execution_engine.queue_callback(self.finish_all)
            self._queued = True
        self.progress(block=False)
        return fut

    def progress(self, block: bool):
        while self._pending and (block or self._pending[0][3].ready()):
            self.ready_early += not block
            t, op_name, avg, ticket, fut = self._pending.popleft()
            try:
                self._shm.allreduce(t, op_name, ticket)
                self._avg([t], avg)
            except Exception as e:  # the waiter sees it; the rest are failed too
                fut.set_exception(e)
                for *_, f in self._pending:
                    f.set_exception(e)
                self._pending.clear()
                raise
            finally:
                key = (t.numel() * t.element_size(), type(ticket))
                self._used.setdefault(key, collections.deque()).append(ticket)
            fut.set_result([t])

    def finish_all(self):
        self._queued = False
        self.progress(block=True)
        self._tickets, self._used = self._used, {}


class _Released:
    """What a destroyed group's collectives meet: a clear error instead of a use of freed gloo state."""

    def __getattr__(self, name):
        raise RuntimeError(
            "webgpu process group: used after destroy_process_group() (or interpreter exit); "
            "create a new group with torch.distributed.init_process_group"
        )


_LIVE = None


def _live_groups():
    """The webgpu groups not yet released (weakly held); released at exit."""
    global _LIVE
    if _LIVE is None:
        import atexit
        import weakref

        _LIVE = weakref.WeakSet()

        def release_all():
            for g in list(_LIVE):
                g._release()

        atexit.register(release_all)
    return _LIVE


def _make_group_class():
    dist = _dist()
    C = torch._C._distributed_c10d

    class ProcessGroupWebGPU(dist.ProcessGroup):
        """A process group for webgpu (and CPU) tensors over a private gloo group."""

        def __init__(self, store, rank: int, size: int, timeout: datetime.timedelta):
            super().__init__(rank, size)
            self._rank, self._size = rank, size
            self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
            self._shm = (
                _SharedMemory(store, self._gloo, rank, size) if _SharedMemory.usable(store, rank, size) else None
            )
            self._deferred = _Deferred(self._shm, self._avg) if self._shm is not None else None
            _live_groups().add(self)

        # ---- teardown -------------------------------------------------------------------------
        # gloo's worker threads drop a finished collective's Work (and the Python-owned host
        # tensors it holds) a moment after wait() returns. If that happens while the interpreter
        # finalizes, the thread's decref cannot take the GIL and the process aborts ("terminate
        # called without an active exception"). So the private gloo group is destroyed while
        # Python is alive: at destroy_process_group (shutdown/abort) or, for a program that never
        # calls it, at exit (atexit). Its destructor joins the worker threads.
        def _release(self):
            if self._shm is not None:
                self._shm.release()
            self._shm = self._deferred = None
            if not isinstance(self._gloo, _Released):
                gloo, self._gloo = self._gloo, _Released()
                del gloo

        def shutdown(self):
            self._release()

        def abort(self):
            self._release()

        # ---- identity -------------------------------------------------------------------------
        def getBackendName(self):
            return _NAME

        def getRank(self):
            return self._rank

        def getSize(self):
            return self._size

        def __repr__(self):
            return f"ProcessGroupWebGPU(rank={self._rank}, size={self._size})"

        @property
        def group_name(self):
            # c10d names the group it created (pg_names) but sets the C++ name on the wrapper our
            # group replaces; DeviceMesh (FSDP2, DTensor) asks for it. Adopt the registered name.
            name = dist.distributed_c10d._world.pg_names.get(self)
            if name is None:
                return dist.ProcessGroup.group_name.fget(self)
            try:
                self._set_group_name(name)
            except RuntimeError:
                pass
            return name

        # ---- helpers --------------------------------------------------------------------------
        def _drain(self):
            """Finishes the deferred all-reduces before any other collective (the same order on
            every rank)."""
            if self._deferred is not None:
                self._deferred.progress(block=True)

        def _reduce_opts(self, cls, opts):
            """gloo has no AVG: run SUM and divide afterwards."""
            avg = _is_avg(opts.reduceOp)
            if not avg:
                return opts, False
            o = cls()
            o.reduceOp = dist.ReduceOp.SUM
            for attr in ("timeout", "rootRank", "rootTensor"):
                if hasattr(opts, attr):
                    setattr(o, attr, getattr(opts, attr))
            return o, True

        def _staged(self, outputs, run, nested=False):
            """The body of a collective whose results land in `outputs` (a list of tensors, or of
            lists of tensors when nested): stages them on the host, runs `run(host outputs)` (a gloo
            call, waited for) and copies the results back; returns the finished Work."""
            ho = [_hosts(outs) for outs in outputs] if nested else _hosts(outputs)
            run(ho).wait()
            for outs, hs in zip(outputs, ho) if nested else [(outputs, ho)]:
                _copy_back(outs, hs)
            return _done(outputs)

        def _avg(self, ts, avg):
            if avg:
                for t in ts:
                    if t.is_floating_point():
                        t.div_(self._size)
                    else:
                        t.floor_divide_(self._size)

        # ---- collectives ----------------------------------------------------------------------
        def allreduce(self, tensors, opts=None):
            opts = opts if opts is not None else C.AllreduceOptions()
            opts, avg = self._reduce_opts(C.AllreduceOptions, opts)
            op_name = next((k for k in _SHM_OPS if opts.reduceOp == getattr(dist.ReduceOp, k)), None)
            if self._shm is not None and op_name in _SHM_OPS and all(_on_device(t) for t in tensors):
                for t in tensors:
                    if t.is_complex() or t.dtype == torch.bool:
                        break
                else:
                    if len(tensors) == 1 and tensors[0].is_contiguous() and _Deferred.possible():
                        fut = self._deferred.start(tensors[0], op_name, avg)
                        return C._create_work_from_future(fut)
                    self._drain()
                    for t in tensors:
                        self._shm.allreduce(t, op_name)
                    self._avg(tensors, avg)
                    return _done(tensors)
            self._drain()
            hs = _hosts(tensors)
            self._gloo.allreduce(hs, opts).wait()
            self._avg(hs, avg)
            _copy_back(tensors, hs)
            return _done(tensors)

        def allreduce_coalesced(self, tensors, opts=None):
            # One allreduce per tensor keeps the arithmetic identical to allreduce's.
            for t in tensors:
                o = C.AllreduceOptions()
                if opts is not None:
                    o.reduceOp = opts.reduceOp
                self.allreduce([t], o)
            return _done(tensors)

        def broadcast(self, tensors, opts=None):
            opts = opts if opts is not None else C.BroadcastOptions()
            return self._staged(tensors, lambda hs: self._gloo.broadcast(hs, opts))

        def reduce(self, tensors, opts=None):
            opts = opts if opts is not None else C.ReduceOptions()
            opts, avg = self._reduce_opts(C.ReduceOptions, opts)
            hs = _hosts(tensors)
            self._gloo.reduce(hs, opts).wait()
            if self._rank == opts.rootRank:
                self._avg(hs, avg)
                _copy_back(tensors, hs)
            return _done(tensors)

        def allgather(self, output_tensors, input_tensors, opts=None):
            opts = opts if opts is not None else C.AllgatherOptions()
            return self._staged(
                output_tensors, lambda ho: self._gloo.allgather(ho, _hosts(input_tensors), opts), nested=True
            )

        def _shm_ok(self, *ts) -> bool:
            """Whether the imported shared memory can serve a collective of these tensors."""
            return (
                self._shm is not None
                and all(_on_device(t) and t.is_contiguous() and not t.is_complex() for t in ts)
                and len({t.dtype for t in ts}) == 1
                and len({t.device for t in ts}) == 1
                and self._shm.importing(ts[0].device)
            )

        def _allgather_base(self, output, input, opts=None):
            # Concatenated along dim 0, rank order: through imported shared memory on one host, else
            # gloo's allgather into the chunks of a host copy.
            if output.numel() == input.numel() * self._size and self._shm_ok(output, input):
                self._drain()
                self._shm.allgather(output, input)
                return _done([output])
            opts = opts if opts is not None else C.AllgatherOptions()
            return self._staged(
                [output], lambda ho: self._gloo.allgather([list(ho[0].chunk(self._size))], [_host(input)], opts)
            )

        all_gather_single = _allgather_base

        def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
            for o, i in zip(outputs, inputs):
                self._allgather_base(o, i, opts)
            return _done(outputs)

        all_gather_single_coalesced = allgather_into_tensor_coalesced

        def gather(self, output_tensors, input_tensors, opts=None):
            opts = opts if opts is not None else C.GatherOptions()
            return self._staged(
                output_tensors, lambda ho: self._gloo.gather(ho, _hosts(input_tensors), opts), nested=True
            )

        def scatter(self, output_tensors, input_tensors, opts=None):
            opts = opts if opts is not None else C.ScatterOptions()
            return self._staged(
                output_tensors, lambda ho: self._gloo.scatter(ho, [_hosts(ins) for ins in input_tensors], opts)
            )

        def reduce_scatter(self, output_tensors, input_tensors, opts=None):
            # gloo has no reduce_scatter: allreduce each rank's input list, keep this rank's part.
            opts = opts if opts is not None else C.ReduceScatterOptions()
            for out, ins in zip(output_tensors, input_tensors):
                stacked = torch.stack([_host(t) for t in ins])
                o = C.AllreduceOptions()
                o.reduceOp = dist.ReduceOp.SUM if _is_avg(opts.reduceOp) else opts.reduceOp
                self._gloo.allreduce([stacked], o).wait()
                part = stacked[self._rank]
                self._avg([part], _is_avg(opts.reduceOp))
                _copy_back([out], [part])
            return _done(output_tensors)

        def _reduce_scatter_base(self, output, input, opts=None):
            opts = opts if opts is not None else C.ReduceScatterOptions()
            avg = _is_avg(opts.reduceOp)
            op_name = "SUM" if avg else next((k for k in _SHM_OPS if opts.reduceOp == getattr(dist.ReduceOp, k)), None)
            if (
                op_name is not None
                and input.numel() == output.numel() * self._size
                and output.dtype != torch.bool
                and self._shm_ok(output, input)
            ):
                self._drain()
                self._shm.reduce_scatter(output, input, op_name)
                self._avg([output], avg)
                return _done([output])
            return self.reduce_scatter([output], [list(input.chunk(self._size))], opts)

        reduce_scatter_single = _reduce_scatter_base

        def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
            for o, i in zip(outputs, inputs):
                self._reduce_scatter_base(o, i, opts)
            return _done(outputs)

        reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

        def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
            opts = opts if opts is not None else C.AllToAllOptions()
            return self._staged(
                [output],
                lambda ho: self._gloo.alltoall_base(
                    ho[0], _host(input), list(output_split_sizes), list(input_split_sizes), opts
                ),
            )

        all_to_all_single = alltoall_base

        def alltoall(self, output_tensors, input_tensors, opts=None):
            opts = opts if opts is not None else C.AllToAllOptions()
            return self._staged(output_tensors, lambda ho: self._gloo.alltoall(ho, _hosts(input_tensors), opts))

        def barrier(self, opts=None):
            # Everything this process recorded reaches the GPU first, as a CUDA barrier orders it.
            if torch.webgpu.is_initialized():
                torch.webgpu.synchronize()
            self._gloo.barrier(opts if opts is not None else C.BarrierOptions()).wait()
            return _done(None)

        def send(self, tensors, dst, tag=0):
            self._gloo.send(_hosts(tensors), dst, tag).wait()
            return _done(tensors)

        def recv(self, tensors, src, tag=0):
            return self._staged(tensors, lambda hs: self._gloo.recv(hs, src, tag))

        def recv_anysource(self, tensors, tag=0):
            hs = _hosts(tensors)
            work = self._gloo.recv_anysource(hs, tag)
            work.wait()
            _copy_back(tensors, hs)
            return work

    def draining(fn):
        def run(self, *args, **kwargs):
            self._drain()
            return fn(self, *args, **kwargs)

        run.__name__, run.__doc__ = fn.__name__, fn.__doc__
        return run

    for name in (
        "broadcast",
        "reduce",
        "allgather",
        "_allgather_base",
        "allgather_into_tensor_coalesced",
        "gather",
        "scatter",
        "reduce_scatter",
        "reduce_scatter_tensor_coalesced",
        "alltoall_base",
        "alltoall",
        "barrier",
        "send",
        "recv",
        "recv_anysource",
    ):
        setattr(ProcessGroupWebGPU, name, draining(getattr(ProcessGroupWebGPU, name)))
    return ProcessGroupWebGPU


_GROUP_CLASS = None


def _group_class():
    global _GROUP_CLASS
    if _GROUP_CLASS is None:
        _GROUP_CLASS = _make_group_class()
    return _GROUP_CLASS


_LAST = None  # the group created last (tests ask which transport it took)


def _create(store, rank, size, timeout):
    global _LAST
    _LAST = _group_class()(store, rank, size, timeout)
    return _LAST


def register() -> bool:
    """Registers the "webgpu" backend with torch.distributed (done at import when it is available)."""
    try:
        dist = _dist()
    except ImportError:
        return False
    if not dist.is_available() or not hasattr(dist, "ProcessGroupGloo"):
        return False
    if _NAME in dist.Backend.backend_list:
        return True
    dist.Backend.register_backend(_NAME, _create, devices=[_NAME])
    return True


def __getattr__(name):
    if name == "ProcessGroupWebGPU":
        return _group_class()
    raise AttributeError(name)
