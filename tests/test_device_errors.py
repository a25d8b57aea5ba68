# Device-side index errors belong to what they poison (issue 14, item 6): an out-of-range index
# recorded by one thread is raised to the code that reads the result it poisoned (or anything
# computed from it), or at that thread's next readback / synchronize(), and never to another
# thread's unrelated read; a poisoned result never reads back as silent zeros.
import threading

import pytest
import torch
from webgpu_env import DEV

import torch_webgpu  # noqa: F401
from torch_webgpu import _C

TIMEOUT = 60


def state():
    return dict(_C._device_error_state())


@pytest.fixture(autouse=True)
def clean():
    torch.webgpu.synchronize()
    yield
    torch.webgpu.synchronize()
    assert state() == {"armed": 0, "found": 0, "tainted": 0}


def run_threads(*fns):
    """Runs each fn in a thread of its own; re-raises the first failure (an assertion) here."""
    errors = []

    def wrap(fn):
        def body():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        return body

    ts = [threading.Thread(target=wrap(f)) for f in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(TIMEOUT)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


@pytest.mark.parametrize("op", ["getitem", "index_select", "gather"])
def test_other_thread_never_sees_the_error(op):
    x = torch.arange(30.0).view(6, 5).to(DEV)
    w = torch.arange(100.0).to(DEV)
    recorded, b_read = threading.Event(), threading.Event()

    def a():
        i = torch.tensor([9]).to(DEV)
        if op == "getitem":
            y, exc = x[i], IndexError
        elif op == "index_select":
            y, exc = x.index_select(0, i), IndexError
        else:
            y, exc = torch.gather(x, 0, i.view(1, 1).expand(1, 5)), RuntimeError
        recorded.set()
        assert b_read.wait(TIMEOUT)
        # B's readback read A's error slot: the error waits for A
        assert state()["found"] == 1
        with pytest.raises(exc, match="index 9 is out of bounds for dimension 0 with size 6"):
            y.cpu()
        assert torch.equal(x[torch.tensor([5]).to(DEV)].cpu(), torch.arange(25.0, 30.0).view(1, 5))

    def b():
        assert recorded.wait(TIMEOUT)
        assert (w * 2).sum().item() == 9900.0  # unrelated: never A's IndexError
        assert w[torch.tensor([3, 4]).to(DEV)].tolist() == [3.0, 4.0]
        b_read.set()

    run_threads(a, b)


def test_poisoned_result_never_reads_as_zeros():
    x = torch.arange(1.0, 31.0).view(6, 5).to(DEV)  # no zero in x: a skipped element would read 0
    recorded, read = threading.Event(), threading.Event()
    box = {}

    def a():
        y = x[torch.tensor([7]).to(DEV)]
        box["y"], box["z"] = y, (y * 2).sum(1)  # computed from the poisoned result before any check
        recorded.set()
        assert read.wait(TIMEOUT)

    def b():
        assert recorded.wait(TIMEOUT)
        # reading what A's bad index poisoned raises, whoever reads it
        with pytest.raises(IndexError, match="index 7 is out of bounds"):
            box["z"].cpu()
        read.set()

    run_threads(a, b)
    del box


def test_poison_spreads_after_the_error_was_found():
    x = torch.arange(1.0, 31.0).view(6, 5).to(DEV)
    w = torch.ones(8).to(DEV)
    step = [threading.Event() for _ in range(3)]
    box = {}

    def a():
        box["y"] = x.index_select(0, torch.tensor([-8]).to(DEV))
        step[0].set()
        assert step[1].wait(TIMEOUT)
        box["z"] = box["y"].exp() + 1  # from a block already known to be poisoned
        step[2].set()

    def b():
        assert step[0].wait(TIMEOUT)
        assert w.sum().item() == 8.0  # finds A's error, holds it for A
        step[1].set()
        assert step[2].wait(TIMEOUT)
        with pytest.raises(IndexError, match="index_select: index -8"):
            box["z"].tolist()
        assert w.sum().item() == 8.0  # reported once; the stream is usable

    run_threads(a, b)
    box.clear()


def test_in_place_index_put_poisons_its_tensor():
    x = torch.arange(1.0, 31.0).view(6, 5).to(DEV)
    w = torch.ones(8).to(DEV)
    recorded, read = threading.Event(), threading.Event()

    def a():
        x.index_put_((torch.tensor([6]).to(DEV),), torch.zeros(5).to(DEV))
        recorded.set()
        assert read.wait(TIMEOUT)

    def b():
        assert recorded.wait(TIMEOUT)
        assert w.sum().item() == 8.0
        with pytest.raises(IndexError, match="index 6 is out of bounds"):
            x.cpu()
        # once raised the error is gone: the bad element was skipped, nothing else written
        assert torch.equal(x.cpu(), torch.arange(1.0, 31.0).view(6, 5))
        read.set()

    run_threads(a, b)


def test_synchronize_raises_once_then_the_stream_is_usable():
    x = torch.randn(4, 3).to(DEV)
    y = x.index_select(0, torch.tensor([9]).to(DEV))
    with pytest.raises(IndexError, match="index_select: index 9 is out of bounds"):
        torch.webgpu.synchronize()
    torch.webgpu.synchronize()  # raised once
    assert state() == {"armed": 0, "found": 0, "tainted": 0}
    assert y.shape == (1, 3)
    assert x.index_select(0, torch.tensor([3]).to(DEV)).sum().item() == pytest.approx(x.cpu()[3].sum().item(), rel=1e-5)


def test_synchronize_in_another_thread_leaves_the_error_to_its_owner():
    x = torch.randn(4, 3).to(DEV)
    recorded, synced = threading.Event(), threading.Event()

    def a():
        x[torch.tensor([4]).to(DEV)]  # result dropped: the error stays A's
        recorded.set()
        assert synced.wait(TIMEOUT)
        with pytest.raises(IndexError, match="index 4"):
            torch.webgpu.synchronize()

    def b():
        assert recorded.wait(TIMEOUT)
        torch.webgpu.synchronize()
        synced.set()

    run_threads(a, b)


def test_freed_poisoned_block_is_not_poisoned_when_reused():
    x = torch.randn(64, 16).to(DEV)
    recorded, reused = threading.Event(), threading.Event()

    def a():
        y = x[torch.tensor([70] * 64).to(DEV)]
        del y  # its block goes back to the pool
        recorded.set()
        assert reused.wait(TIMEOUT)
        with pytest.raises(IndexError, match="index 70"):
            torch.webgpu.synchronize()

    def b():
        assert recorded.wait(TIMEOUT)
        z = torch.zeros(64, 16, device=DEV) + 1  # may reuse y's buffer
        assert z.sum().item() == 64 * 16
        reused.set()

    run_threads(a, b)


def test_more_checked_kernels_than_slots():
    x = torch.arange(10.0).to(DEV)
    good, bad = torch.tensor([1]).to(DEV), torch.tensor([10]).to(DEV)
    ys = [x[good] for _ in range(300)]
    assert sum(y.item() for y in ys[:3]) == 3.0
    ys = [x[bad if k == 200 else good] for k in range(300)]
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        ys[200].cpu()
    assert ys[299].item() == 1.0
    # the same from two threads at once: each gets only its own error
    start = threading.Barrier(2)

    def worker(bad_at):
        def body():
            start.wait(TIMEOUT)
            ys = [x[bad if k == bad_at else good] for k in range(200)]
            if bad_at is None:
                assert sum(y.item() for y in ys) == 200.0
            else:
                with pytest.raises(IndexError, match="index 10"):
                    torch.webgpu.synchronize()

        return body

    run_threads(worker(150), worker(None))
