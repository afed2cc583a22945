#!/usr/bin/python3
"""Zero-copy DLPack interop between odetensor and NumPy (legacy "dltensor" capsules).

Run with Debian's /usr/bin/python3 (NumPy 1.24 from python3-numpy):
    ODETENSOR_LIB=$PWD/build/libodetensor.so /usr/bin/python3 tests/python/test_numpy_dlpack.py

1. export: an odetensor tensor -> ot_dlpack_export_legacy -> capsule -> numpy.from_dlpack
2. import: a Fortran-ordered ndarray's __dlpack__() capsule -> ot_dlpack_import_legacy;
   a C-ordered one is refused, then copied with ot_tensor_copy_colmajor
3. read-only arrays and tensors
Prints one line per check and a summary; exits 1 on any failure.
"""
import ctypes as C
import gc
import os
import sys
import traceback

import numpy as np

LIB_PATH = os.environ.get("ODETENSOR_LIB")
if not LIB_PATH:
    sys.exit("test_numpy_dlpack: set ODETENSOR_LIB to the path of libodetensor.so")

# PyDLL keeps the GIL held during every call. That matters: ot_tensor_free and a
# failing import run the producer's deleter, and NumPy 1.24's deleter calls
# PyMem_Free and Py_XDECREF without taking the GIL itself.
lib = C.PyDLL(LIB_PATH)

OT_OK, OT_ERR_LAYOUT, OT_ERR_READ_ONLY = 0, -2, -6
OT_F32, OT_F64 = 1, 2
OT_CPU = 1


# ---- ABI mirrors of include/odetensor/tensor.h and <dlpack/dlpack.h> (0.6) ----
def struct(name, *fields):
    return type(name, (C.Structure,), {"_fields_": list(fields)})


OtDevice = struct("OtDevice", ("type", C.c_int32), ("id", C.c_int32))
OtLayout = struct("OtLayout", ("data", C.c_void_p), ("dtype", C.c_int32),
                  ("ndim", C.c_int32), ("device", OtDevice), ("shape", C.c_int64 * 3),
                  ("strides", C.c_int64 * 3))
OtView = struct("OtView", ("layout", OtLayout))
OtViewMut = struct("OtViewMut", ("layout", OtLayout))
DLDevice = struct("DLDevice", ("device_type", C.c_int32), ("device_id", C.c_int32))
DLDataType = struct("DLDataType", ("code", C.c_uint8), ("bits", C.c_uint8),
                    ("lanes", C.c_uint16))
DLTensor = struct("DLTensor", ("data", C.c_void_p), ("device", DLDevice),
                  ("ndim", C.c_int32), ("dtype", DLDataType),
                  ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)),
                  ("byte_offset", C.c_uint64))
DLManagedTensor = struct("DLManagedTensor", ("dl_tensor", DLTensor),
                         ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p))
assert C.sizeof(OtLayout) == 72 and C.sizeof(DLManagedTensor) == 64

RELEASE_FN = C.CFUNCTYPE(None, C.c_void_p)   # ot_release_fn
DELETER_FN = C.PYFUNCTYPE(None, C.c_void_p)  # a DLManagedTensor deleter, called with the GIL
tensor_p = C.c_void_p                         # ot_tensor *


def fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


ot_status_name = fn("ot_status_name", C.c_char_p, C.c_int)
ot_last_error = fn("ot_last_error", C.c_char_p)
ot_clear_error = fn("ot_clear_error", None)
ot_tensor_new = fn("ot_tensor_new", C.c_int, C.POINTER(tensor_p), C.c_int, C.c_int,
                   C.POINTER(C.c_int64))
ot_tensor_wrap = fn("ot_tensor_wrap", C.c_int, C.POINTER(tensor_p), C.POINTER(OtLayout),
                    C.c_int, RELEASE_FN, C.c_void_p)
ot_tensor_free = fn("ot_tensor_free", None, tensor_p)
ot_tensor_layout = fn("ot_tensor_layout", C.POINTER(OtLayout), tensor_p)
ot_tensor_view = fn("ot_tensor_view", OtView, tensor_p)
ot_tensor_view_mut = fn("ot_tensor_view_mut", C.c_int, tensor_p, C.POINTER(OtViewMut))
ot_view_get = fn("ot_view_get", C.c_int, OtView, C.c_int64, C.c_int64, C.c_int64,
                 C.POINTER(C.c_double))
ot_view_mut_set = fn("ot_view_mut_set", C.c_int, OtViewMut, C.c_int64, C.c_int64,
                     C.c_int64, C.c_double)
ot_tensor_copy_colmajor = fn("ot_tensor_copy_colmajor", C.c_int, C.POINTER(tensor_p),
                             C.POINTER(OtLayout), C.c_int)
ot_dlpack_export_legacy = fn("ot_dlpack_export_legacy", C.c_int, tensor_p,
                             C.POINTER(C.POINTER(DLManagedTensor)))
ot_dlpack_import_legacy = fn("ot_dlpack_import_legacy", C.c_int,
                             C.POINTER(DLManagedTensor), C.POINTER(tensor_p))
ot_dlpack_layout = fn("ot_dlpack_layout", C.c_int, C.POINTER(DLTensor),
                      C.POINTER(OtLayout))

# ---- PyCapsule API ---------------------------------------------------------
DLTENSOR, USED_DLTENSOR = b"dltensor", b"used_dltensor"  # module constants outlive capsules
CAPSULE_DESTRUCTOR = C.CFUNCTYPE(None, C.c_void_p)


def pyapi(name, restype, *argtypes):
    f = C.pythonapi[name]  # [] gives a fresh function object, so argtypes do not clash
    f.restype, f.argtypes = restype, list(argtypes)
    return f


PyCapsule_New = pyapi("PyCapsule_New", C.py_object, C.c_void_p, C.c_char_p,
                      CAPSULE_DESTRUCTOR)
PyCapsule_GetPointer = pyapi("PyCapsule_GetPointer", C.c_void_p, C.py_object, C.c_char_p)
PyCapsule_SetName = pyapi("PyCapsule_SetName", C.c_int, C.py_object, C.c_char_p)
PyCapsule_IsValid = pyapi("PyCapsule_IsValid", C.c_int, C.py_object, C.c_char_p)
# The destructor gets a dying object: take it as a raw address, never as py_object
# (that would incref and decref an object whose refcount is already 0).
raw_is_valid = pyapi("PyCapsule_IsValid", C.c_int, C.c_void_p, C.c_char_p)
raw_get_pointer = pyapi("PyCapsule_GetPointer", C.c_void_p, C.c_void_p, C.c_char_p)

destructor_deletes = []  # managed-tensor addresses our capsule destructor deleted


@CAPSULE_DESTRUCTOR
def dltensor_capsule_destructor(capsule_addr):
    """DLPack rule: a capsule still named "dltensor" was never consumed: delete it."""
    if raw_is_valid(capsule_addr, DLTENSOR):
        mt = raw_get_pointer(capsule_addr, DLTENSOR)
        destructor_deletes.append(mt)
        DELETER_FN(DLManagedTensor.from_address(mt).deleter)(mt)


def capsule_from(mt):
    return PyCapsule_New(C.cast(mt, C.c_void_p), DLTENSOR, dltensor_capsule_destructor)


def managed_from(capsule):
    return C.cast(PyCapsule_GetPointer(capsule, DLTENSOR), C.POINTER(DLManagedTensor))


class Producer:
    """The smallest __dlpack__ producer: hands out its capsule once."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None):
        cap, self.capsule = self.capsule, None
        if cap is None:
            raise BufferError("Producer: the capsule was already taken")
        return cap

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0


# ---- reporting and helpers ---------------------------------------------------
passed = failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}" + (f" ({detail})" if detail else ""))
    return cond


def status_ok(st, what):
    return check(st == OT_OK, what,
                 f"{ot_status_name(st).decode()}: {ot_last_error().decode()}")


def get(view, idx):
    i, j, k = (tuple(idx) + (0, 0, 0))[:3]
    out = C.c_double()
    st = ot_view_get(view, i, j, k, C.byref(out))
    if st != OT_OK:
        raise RuntimeError(f"ot_view_get{idx}: {ot_last_error().decode()}")
    return out.value


def put(view_mut, idx, value):
    i, j, k = (tuple(idx) + (0, 0, 0))[:3]
    if ot_view_mut_set(view_mut, i, j, k, value) != OT_OK:
        raise RuntimeError(f"ot_view_mut_set{idx}: {ot_last_error().decode()}")


def same_values(view, arr):
    return all(get(view, idx) == float(arr[idx]) for idx in np.ndindex(arr.shape))


# Release callbacks and wrapped buffers live at module level: were a test to fail
# half-way, its frame could otherwise free them before the tensor that uses them.
releases = []  # ctx of every release call, in order
on_release = RELEASE_FN(lambda ctx: releases.append(ctx))
buffers = []


def c_buffer(ctype, n):
    buf = (ctype * n)()
    buffers.append(buf)
    return C.addressof(buf)


def colmajor_layout(data, dtype, shape):
    item = 8 if dtype == OT_F64 else 4
    l = OtLayout(data=data, dtype=dtype, ndim=len(shape), device=OtDevice(OT_CPU, 0))
    stride = item
    for k in range(3):
        l.shape[k] = shape[k] if k < len(shape) else 1
        l.strides[k] = stride
        stride *= l.shape[k]
    return l


# ---- 1. export: odetensor -> NumPy ----------------------------------------
def test_export_wrapped():
    releases.clear()
    layout = colmajor_layout(c_buffer(C.c_double, 12), OT_F64, (3, 4))
    t = tensor_p()
    status_ok(ot_tensor_wrap(C.byref(t), C.byref(layout), 0, on_release, 0xA11CE),
              "export: ot_tensor_wrap over a ctypes buffer [3, 4] f64")
    vm = OtViewMut()
    status_ok(ot_tensor_view_mut(t, C.byref(vm)), "export: ot_tensor_view_mut")
    view = ot_tensor_view(t)
    for i, j in np.ndindex(3, 4):
        put(vm, (i, j), 10.0 * i + j + 0.5)
    data = ot_tensor_layout(t).contents.data

    mt = C.POINTER(DLManagedTensor)()
    status_ok(ot_dlpack_export_legacy(t, C.byref(mt)), "export: ot_dlpack_export_legacy")
    dl = mt.contents.dl_tensor
    check(dl.data == data and dl.ndim == 2 and (dl.dtype.code, dl.dtype.bits) == (2, 64)
          and list(dl.strides[:2]) == [1, 3] and list(dl.shape[:2]) == [3, 4],
          "export: DLTensor has the data pointer, shape [3, 4], element strides [1, 3]")
    cap = capsule_from(mt)
    arr = np.from_dlpack(Producer(cap))
    check(arr.ctypes.data == data, "export: from_dlpack shares memory (arr.ctypes.data "
          "== C data pointer)", f"{arr.ctypes.data:#x} vs {data:#x}")
    check(arr.shape == (3, 4) and arr.strides == (8, 24) and arr.dtype == np.float64
          and arr.flags.f_contiguous, "export: shape (3, 4), Fortran strides (8, 24), float64",
          f"{arr.shape} {arr.strides} {arr.dtype}")
    check(PyCapsule_IsValid(cap, USED_DLTENSOR) == 1,
          "export: numpy renamed the consumed capsule to used_dltensor")
    expect = 10.0 * np.arange(3)[:, None] + np.arange(4)[None, :] + 0.5
    check(np.array_equal(arr, expect), "export: numpy sees the values C wrote before export")
    put(vm, (1, 2), 42.0)
    check(arr[1, 2] == 42.0, "export: a C write after export (ot_view_mut_set) is seen "
          "in numpy", f"arr[1, 2] = {arr[1, 2]}")
    # NumPy 1.x marks every from_dlpack array read-only (legacy DLPack cannot say
    # whether writing is allowed) and refuses to make it writable; NumPy 2 does not.
    if not arr.flags.writeable:
        try:
            arr.flags.writeable = True
            refused = False
        except ValueError:
            refused = True
        check(refused, f"export: numpy {np.__version__} returns a read-only array and "
              "refuses writeable=True")
        alias = np.ndarray((3, 4), np.float64, order="F",
                           buffer=(C.c_double * 12).from_address(data))
    else:
        alias = arr
    alias[2, 3] = -7.25
    check(get(view, (2, 3)) == -7.25 and arr[2, 3] == -7.25,
          "export: a numpy write to the shared memory is seen by C (ot_view_get)")
    del alias

    del cap
    gc.collect()
    check(releases == [] and destructor_deletes == [],
          "export: dropping the consumed capsule frees nothing", f"releases={releases}")
    col = arr[:, 1]  # a slice keeps the buffer alive after arr itself is gone
    del arr
    gc.collect()
    check(releases == [], "export: release not called while a slice of the array lives")
    check(col[2] == 21.5, "export: the slice still reads the shared buffer")
    del col
    gc.collect()
    check(releases == [0xA11CE], "export: release called exactly once, with its ctx, "
          "when numpy drops the last array", f"releases={releases}")
    gc.collect()
    check(len(releases) == 1, "export: and not again after a later gc.collect()")


def test_export_new_f32_3d():
    t = tensor_p()
    shape = (C.c_int64 * 3)(2, 3, 4)
    status_ok(ot_tensor_new(C.byref(t), OT_F32, 3, shape), "export: ot_tensor_new [2, 3, 4] f32")
    vm = OtViewMut()
    ot_tensor_view_mut(t, C.byref(vm))
    data = ot_tensor_layout(t).contents.data
    mt = C.POINTER(DLManagedTensor)()
    status_ok(ot_dlpack_export_legacy(t, C.byref(mt)), "export: f32 tensor exported")
    arr = np.from_dlpack(Producer(capsule_from(mt)))
    check(arr.ctypes.data == data and arr.dtype == np.float32 and arr.shape == (2, 3, 4)
          and arr.strides == (4, 8, 24), "export: 3-D f32 shares memory with Fortran "
          "strides (4, 8, 24)", f"{arr.dtype} {arr.shape} {arr.strides}")
    put(vm, (1, 2, 3), 0.25)
    check(arr[1, 2, 3] == np.float32(0.25) and arr.sum() == np.float32(0.25),
          "export: a C write into the 3-D f32 tensor is seen in numpy")
    del arr  # numpy's deleter frees the tensor (checked by ASan under SANITIZE=1)
    gc.collect()


def test_export_unconsumed():
    releases.clear()
    layout = colmajor_layout(c_buffer(C.c_float, 6), OT_F32, (6,))
    t = tensor_p()
    status_ok(ot_tensor_wrap(C.byref(t), C.byref(layout), 0, on_release, 7),
              "unconsumed: ot_tensor_wrap [6] f32")
    mt = C.POINTER(DLManagedTensor)()
    status_ok(ot_dlpack_export_legacy(t, C.byref(mt)), "unconsumed: exported")
    cap = capsule_from(mt)
    check(releases == [], "unconsumed: nothing released while the capsule lives")
    addr = C.cast(mt, C.c_void_p).value
    del cap
    gc.collect()
    check(releases == [7] and destructor_deletes == [addr],
          "unconsumed: dropping a never-consumed capsule releases exactly once",
          f"releases={releases} deletes={len(destructor_deletes)}")
    destructor_deletes.clear()


# ---- 2. import: NumPy -> odetensor -----------------------------------------
def test_import(shape, dtype):
    name = f"import {np.dtype(dtype).name} {shape}"
    arr = np.asfortranarray(np.arange(np.prod(shape), dtype=dtype).reshape(shape) * 1.5 - 3)
    rc0 = sys.getrefcount(arr)
    cap = arr.__dlpack__()
    check(sys.getrefcount(arr) == rc0 + 1, f"{name}: the capsule holds a reference")
    t = tensor_p()
    st = ot_dlpack_import_legacy(managed_from(cap), C.byref(t))
    PyCapsule_SetName(cap, USED_DLTENSOR)  # consumed, whatever the status
    del cap
    if not status_ok(st, f"{name}: ot_dlpack_import_legacy"):
        return
    l = ot_tensor_layout(t).contents
    check(l.data == arr.ctypes.data, f"{name}: zero copy (layout data == arr.ctypes.data)")
    check(l.ndim == arr.ndim and list(l.shape[:arr.ndim]) == list(arr.shape)
          and list(l.strides[:arr.ndim]) == list(arr.strides)
          and l.dtype == (OT_F64 if arr.itemsize == 8 else OT_F32),
          f"{name}: shape, byte strides and dtype match")
    view = ot_tensor_view(t)
    check(same_values(view, arr), f"{name}: every element matches (ot_view_get)")
    last = tuple(n - 1 for n in shape)
    arr[last] = 123.25
    check(get(view, last) == 123.25, f"{name}: a numpy write is seen through the tensor")
    vm = OtViewMut()
    st = ot_tensor_view_mut(t, C.byref(vm))
    if status_ok(st, f"{name}: the tensor is writable (ot_tensor_view_mut)"):
        put(vm, (0,) * len(shape), -0.5)
        check(arr[(0,) * len(shape)] == -0.5, f"{name}: a C write is seen in numpy")
    gc.collect()
    check(sys.getrefcount(arr) == rc0 + 1, f"{name}: the tensor keeps the array alive")
    ot_tensor_free(t)
    check(sys.getrefcount(arr) == rc0, f"{name}: ot_tensor_free gives the reference back",
          f"{sys.getrefcount(arr)} vs {rc0}")


def test_import_row_major():
    arr = np.arange(12, dtype=np.float64).reshape(3, 4).copy()  # C order
    rc0 = sys.getrefcount(arr)
    cap = arr.__dlpack__()
    t = tensor_p()
    ot_clear_error()
    st = ot_dlpack_import_legacy(managed_from(cap), C.byref(t))
    PyCapsule_SetName(cap, USED_DLTENSOR)  # import consumed it even though it failed
    msg = ot_last_error().decode()
    check(st == OT_ERR_LAYOUT and not t, "row-major: import refused with "
          "OT_ERR_LAYOUT (-2), no tensor returned", f"status {st}")
    check("row-major" in msg, "row-major: ot_last_error() says row-major", repr(msg))
    check(sys.getrefcount(arr) == rc0, "row-major: the failed import already ran "
          "numpy's deleter (refcount back)", f"{sys.getrefcount(arr)} vs {rc0}")
    del cap
    gc.collect()
    check(sys.getrefcount(arr) == rc0, "row-major: dropping the renamed capsule does "
          "not delete twice")

    cap = arr.__dlpack__()
    dlt = C.cast(managed_from(cap), C.POINTER(DLTensor))  # dl_tensor is at offset 0
    raw = OtLayout()
    status_ok(ot_dlpack_layout(dlt, C.byref(raw)), "row-major: ot_dlpack_layout accepts it")
    check(list(raw.strides[:2]) == [32, 8] and raw.data == arr.ctypes.data,
          "row-major: raw layout has the row-major byte strides (32, 8)")
    copy = tensor_p()
    status_ok(ot_tensor_copy_colmajor(C.byref(copy), C.byref(raw), OT_F64),
              "row-major: ot_tensor_copy_colmajor(..., OT_F64)")
    cl = ot_tensor_layout(copy).contents
    check(cl.data != arr.ctypes.data and list(cl.strides[:2]) == [8, 24],
          "row-major: the copy is a new column-major buffer (strides 8, 24)")
    check(same_values(ot_tensor_view(copy), arr), "row-major: copy[i, j] == arr[i, j]")
    flat = np.ctypeslib.as_array((C.c_double * 12).from_address(cl.data))
    check(np.array_equal(flat, arr.ravel(order="F")),
          "row-major: the copy's memory is arr in column-major order")
    ot_tensor_free(copy)
    check(sys.getrefcount(arr) == rc0 + 1, "row-major: the unconsumed capsule still "
          "holds the array")
    del cap, dlt
    gc.collect()
    check(sys.getrefcount(arr) == rc0, "row-major: numpy frees its unconsumed capsule")


# ---- 3. read-only -----------------------------------------------------------
def test_read_only():
    arr = np.asfortranarray(np.ones((2, 2)))
    arr.flags.writeable = False
    rc0 = sys.getrefcount(arr)
    try:
        cap = arr.__dlpack__()
    except BufferError as e:
        check(True, f"read-only: numpy {np.__version__} refuses to export it "
              f"(BufferError: {e})")
    else:  # newer numpy: legacy capsules cannot carry READ_ONLY, so it would be lost
        del cap
        check(False, f"read-only: numpy {np.__version__} exported a read-only array "
              "as a legacy capsule, which cannot say read-only")
    check(sys.getrefcount(arr) == rc0, "read-only: the refused export leaks no reference")
    try:
        np.from_dlpack(arr)
        check(False, "read-only: numpy.from_dlpack(read-only array) did not raise")
    except BufferError:
        check(True, "read-only: numpy.from_dlpack(read-only array) raises BufferError too")

    releases.clear()
    layout = colmajor_layout(c_buffer(C.c_double, 4), OT_F64, (2, 2))
    t = tensor_p()
    status_ok(ot_tensor_wrap(C.byref(t), C.byref(layout), 1, on_release, 3),
              "read-only: ot_tensor_wrap(read_only=1)")
    mt = C.POINTER(DLManagedTensor)()
    st = ot_dlpack_export_legacy(t, C.byref(mt))
    check(st == OT_ERR_READ_ONLY and not mt and releases == [],
          "read-only: ot_dlpack_export_legacy refuses a read-only tensor and keeps it",
          f"status {st}")
    ot_tensor_free(t)
    check(releases == [3], "read-only: the refused tensor is freed once by its owner")


def run(test, *args):
    try:
        test(*args)
    except Exception:  # a crash in one test is a failure; the others still run
        check(False, f"{test.__name__}{args} raised", traceback.format_exc().strip())


def main():
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}, library {LIB_PATH}")
    run(test_export_wrapped)
    run(test_export_new_f32_3d)
    run(test_export_unconsumed)
    for shape in ((3, 4), (2, 3, 4)):
        for dtype in (np.float64, np.float32):
            run(test_import, shape, dtype)
    run(test_import_row_major)
    run(test_read_only)
    gc.collect()
    print(f"numpy-dlpack: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
