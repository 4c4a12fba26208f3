# SPDX-License-Identifier: MIT
"""vnpu: run ONNX models on the vnpu NPU or the CPU from Python.

A thin ctypes layer over libvnpu (the C library does all the work), with
numpy arrays in and out::

    import numpy as np
    import vnpu

    core = vnpu.Core()
    print(core.available_devices)                    # ['CPU', 'NPU.0']
    compiled = core.compile_model("model.onnx", "CPU")
    request = compiled.create_infer_request()
    outputs = request.infer({"x": np.ones((1, 3), np.float32)})

Every failure raises vnpu.Error, whose ``status`` is the C status name
("NOT_FOUND", ...) and whose text is the library's message. Objects free
their C handles when collected; each keeps what it depends on alive.
"""
import ctypes
import mmap
import os
import threading

import numpy as np

from . import _lib

__all__ = ["Core", "Model", "CompiledModel", "InferRequest", "Port", "Tensor", "Error",
           "version"]

_c = _lib.load()

_STATUS = {0: "OK", -1: "GENERAL_ERROR", -2: "NOT_IMPLEMENTED", -3: "INVALID_ARGUMENT",
           -4: "NOT_FOUND", -5: "OUT_OF_MEMORY", -6: "UNSUPPORTED", -7: "PARSE_ERROR",
           -8: "DEVICE_ERROR", -9: "BUSY", -10: "NOT_READY", -11: "CANCELLED",
           -12: "TIMEOUT", -13: "DEVICE_FAULT", -14: "WRONG_VERSION"}
# vnpu_element_type (ONNX's numbers) <-> numpy; bf16 and strings have none.
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
           6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
           12: np.uint32, 13: np.uint64}
_TYPES = {np.dtype(v): k for k, v in _DTYPES.items()}
# vnpu_fence_kind
_FENCES = {"sync_file": 0, "syncobj": 1}


class Error(Exception):
    """A libvnpu call failed: ``status`` names the vnpu_status."""

    def __init__(self, status, message):
        self.status = _STATUS.get(status, str(status))
        super().__init__(f"{self.status}: {message}")


def _check(status, what=""):
    if status != 0:
        detail = _c.vnpu_last_error().decode(errors="replace")
        raise Error(status, f"{what}: {detail}" if what else detail)


def _b(text):
    return None if text is None else os.fsencode(text) if isinstance(text, os.PathLike) \
        else text.encode()


def _s(raw):
    return raw.decode(errors="replace") if raw is not None else None


def version():
    """libvnpu's version, "MAJOR.MINOR.PATCH"."""
    return _s(_c.vnpu_get_version())


def _value(ptr):
    """A vnpu_property_value as a Python value, then freed."""
    v = ptr.contents
    try:
        if v.type == 0:
            return bool(v.integer)
        if v.type == 1:
            return int(v.integer)
        if v.type == 3:
            return [_s(v.items[i]) for i in range(v.count)]
        if v.type == 4:
            return tuple(v.range)
        return _s(v.text)
    finally:
        _c.vnpu_property_value_free(ptr)


def _text(value):
    """A Python value as a property's text form."""
    if isinstance(value, bool):
        return "YES" if value else "NO"
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def _shape(dims):
    dims = tuple(int(d) for d in dims)
    if len(dims) > _lib.MAX_RANK:
        raise Error(-3, f"rank {len(dims)} above {_lib.MAX_RANK}")
    s = _lib.Shape()
    s.rank = len(dims)
    s.dims[:len(dims)] = dims
    return s


def _type_of(dtype, what):
    """libvnpu's element type of numpy @dtype."""
    try:
        return _TYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise Error(-3, f"{what}: dtype {dtype} is not one libvnpu takes") from None


def _fence_kind(kind):
    if kind not in _FENCES:
        raise Error(-3, f"fence kind {kind!r}: one of {', '.join(_FENCES)}")
    return _FENCES[kind]


class Port:
    """A model input or output: ``name``, ``dtype`` (numpy, or None for a
    type numpy lacks), ``type`` (libvnpu's name: "f32") and ``shape``
    (-1 where dynamic)."""

    def __init__(self, name, type_, shape, index):
        self.name, self.index = name, index
        self.dtype = _DTYPES.get(type_)
        self.type = _s(_c.vnpu_element_type_str(type_))
        self.shape = shape

    def __repr__(self):
        return f"Port({self.name!r}, {self.type}, {list(self.shape)})"


class _Handle:
    """Owns one C handle, freed with @_free when collected."""
    _free = None

    def __init__(self, handle, keep=None):
        self._h = ctypes.c_void_p(handle)
        self._keep = keep       # what must outlive this handle in Python

    def __del__(self):
        if getattr(self, "_h", None) and self._h.value:
            type(self)._free(self._h)
            self._h = None


class Core(_Handle):
    """Finds the devices, holds properties, reads and compiles models."""
    _free = _c.vnpu_core_free

    def __init__(self):
        h = ctypes.c_void_p()
        _check(_c.vnpu_core_create(ctypes.byref(h)), "create the core")
        super().__init__(h.value)

    @property
    def available_devices(self):
        names = ctypes.POINTER(ctypes.c_char_p)()
        count = ctypes.c_uint32()
        _check(_c.vnpu_core_get_available_devices(self._h, ctypes.byref(names),
                                                  ctypes.byref(count)))
        try:
            return [_s(names[i]) for i in range(count.value)]
        finally:
            _c.vnpu_free(ctypes.cast(names, ctypes.c_void_p))

    def get_property(self, key, device=None):
        """Property @key of @device (None: of the core), as bool, int,
        str, list or (min, max, step)."""
        v = ctypes.POINTER(_lib.PropertyValue)()
        _check(_c.vnpu_core_get_property(self._h, _b(device), _b(key), ctypes.byref(v)),
               key)
        return _value(v)

    def set_property(self, key, value, device=None):
        """Set RW property @key (of @device, or of the core)."""
        _check(_c.vnpu_core_set_property_str(self._h, _b(device), _b(key),
                                             _b(_text(value))), key)

    def read_model(self, model):
        """Read an ONNX model from a path or from bytes."""
        h = ctypes.c_void_p()
        if isinstance(model, (bytes, bytearray)):
            data = bytes(model)
            _check(_c.vnpu_core_read_model_from_memory(self._h, data, len(data),
                                                       ctypes.byref(h)), "read the model")
        else:
            _check(_c.vnpu_core_read_model(self._h, _b(model), ctypes.byref(h)), str(model))
        return Model(h.value)

    def compile_model(self, model, device="CPU", config=None):
        """Compile @model (a Model, a path or bytes) for @device with the
        compile properties @config ({"ENABLE_PROFILING": True, ...})."""
        if not isinstance(model, Model):
            model = self.read_model(model)
        pairs = [_b(x) for k, v in (config or {}).items() for x in (k, _text(v))]
        props = (ctypes.c_char_p * (len(pairs) + 1))(*pairs, None)
        h = ctypes.c_void_p()
        _check(_c.vnpu_core_compile_model(self._h, model._h, _b(device), props,
                                          ctypes.byref(h)), f"compile for {device}")
        return CompiledModel(h.value, self)

    def import_model(self, blob, device=None):
        """Import a blob from CompiledModel.export()."""
        h = ctypes.c_void_p()
        _check(_c.vnpu_core_import_model(self._h, bytes(blob), len(blob), _b(device),
                                         ctypes.byref(h)), "import")
        return CompiledModel(h.value, self)

    def create_remote_tensor(self, device, shape, dtype):
        """A Tensor of @shape and @dtype over new page-aligned memory that
        @device reads and writes in place (the NPU as a userptr buffer);
        ``tensor.device`` is None when the device took it as host memory,
        which requests copy."""
        s = _shape(shape)
        t = _type_of(dtype, "remote tensor")
        if any(d < 0 for d in s.dims[:s.rank]):
            raise Error(-3, f"remote tensor: shape {tuple(shape)} has a dynamic dimension")
        nbytes = int(np.prod(s.dims[:s.rank], dtype=np.int64)) * np.dtype(dtype).itemsize
        memory = mmap.mmap(-1, max(nbytes, 1))
        address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
        h = ctypes.c_void_p()
        _check(_c.vnpu_core_create_remote_tensor(self._h, _b(device), t, ctypes.byref(s),
                                                 address, ctypes.byref(h)),
               f"remote tensor on {device}")
        # The tensor holds the mapping (and the core, its device's owner).
        return Tensor(h.value, (memory, self))

    def import_dmabuf_tensor(self, device, fd, shape, dtype):
        """A Tensor of @shape and @dtype over the dma-buf @fd, which
        @device reads and writes in place; the caller keeps @fd."""
        s = _shape(shape)
        h = ctypes.c_void_p()
        _check(_c.vnpu_core_import_dmabuf_tensor(self._h, _b(device),
                                                 _type_of(dtype, "dma-buf tensor"),
                                                 ctypes.byref(s), int(fd), ctypes.byref(h)),
               f"dma-buf tensor on {device}")
        return Tensor(h.value, self)


class Model(_Handle):
    """A model read from ONNX: its ports; reshape() before compiling."""
    _free = _c.vnpu_model_free

    def _ports(self, size_fn, name_fn, type_fn, shape_fn):
        n = ctypes.c_size_t()
        _check(size_fn(self._h, ctypes.byref(n)))
        ports = []
        for i in range(n.value):
            name, t, s = ctypes.c_char_p(), ctypes.c_int(), _lib.Shape()
            _check(name_fn(self._h, i, ctypes.byref(name)))
            _check(type_fn(self._h, i, ctypes.byref(t)))
            st = shape_fn(self._h, i, ctypes.byref(s))
            shape = tuple(s.dims[:s.rank]) if st == 0 else None
            ports.append(Port(_s(name.value), t.value, shape, i))
        return ports

    @property
    def inputs(self):
        return self._ports(_c.vnpu_model_get_inputs_size, _c.vnpu_model_input_name,
                           _c.vnpu_model_input_type, _c.vnpu_model_input_shape)

    @property
    def outputs(self):
        return self._ports(_c.vnpu_model_get_outputs_size, _c.vnpu_model_output_name,
                           _c.vnpu_model_output_type, _c.vnpu_model_output_shape)

    def reshape(self, shapes):
        """Give inputs shapes: {name: (d, d, ...)}."""
        for name, dims in shapes.items():
            s = _shape(dims)
            _check(_c.vnpu_model_reshape(self._h, _b(name), ctypes.byref(s)),
                   f"reshape {name}")

    def _input_index(self, input):
        if isinstance(input, str):
            index = ctypes.c_size_t()
            _check(_c.vnpu_model_input_index(self._h, _b(input), ctypes.byref(index)), input)
            return index.value
        if isinstance(input, bool) or not isinstance(input, int) or input < 0:
            raise Error(-3, f"{input!r}: an input is named by its name or its index")
        return input

    def input_decides_shapes(self, input):
        """Whether the values of @input (its name or index) decide shapes
        in the model: a static-shape device compiles the model once they
        are frozen (freeze_input)."""
        out = ctypes.c_int()
        _check(_c.vnpu_model_input_decides_shapes(self._h, self._input_index(input),
                                                  ctypes.byref(out)), f"input {input}")
        return bool(out.value)

    def freeze_input(self, name, array):
        """Make input @name the constant @array (its dtype the input's,
        its shape one the input takes); the input leaves the model's inputs."""
        array = np.ascontiguousarray(array)
        t = _type_of(array.dtype, name)
        s = _shape(array.shape)
        _check(_c.vnpu_model_freeze_input(self._h, _b(name), t,
                                          ctypes.byref(s),
                                          array.ctypes.data_as(ctypes.c_void_p),
                                          array.nbytes), f"freeze {name}")


class CompiledModel(_Handle):
    """A model compiled for one device; makes infer requests."""
    _free = _c.vnpu_compiled_model_free

    def _ports(self, count_fn, get_fn):
        n = ctypes.c_uint32()
        _check(count_fn(self._h, ctypes.byref(n)))
        ports = []
        for i in range(n.value):
            p = _lib.Port()
            _check(get_fn(self._h, i, ctypes.byref(p)))
            ports.append(Port(_s(p.name), p.type, tuple(p.shape.dims[:p.shape.rank]), i))
        return ports

    @property
    def inputs(self):
        return self._ports(_c.vnpu_compiled_model_get_num_inputs,
                           _c.vnpu_compiled_model_get_input)

    @property
    def outputs(self):
        return self._ports(_c.vnpu_compiled_model_get_num_outputs,
                           _c.vnpu_compiled_model_get_output)

    def get_property(self, key):
        v = ctypes.POINTER(_lib.PropertyValue)()
        _check(_c.vnpu_compiled_model_get_property(self._h, _b(key), ctypes.byref(v)), key)
        return _value(v)

    def export(self):
        """The compiled model as a blob (bytes) for Core.import_model()."""
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        _check(_c.vnpu_compiled_model_export(self._h, ctypes.byref(data), ctypes.byref(size)))
        try:
            return ctypes.string_at(data, size.value)
        finally:
            _c.vnpu_free(data)

    def create_infer_request(self):
        h = ctypes.c_void_p()
        _check(_c.vnpu_compiled_model_create_infer_request(self._h, ctypes.byref(h)),
               "create an infer request")
        return InferRequest(h.value, self)

    def __call__(self, inputs):
        """One synchronous inference on a new request: {name: array}."""
        return self.create_infer_request().infer(inputs)


class Tensor(_Handle):
    """A tensor of the caller's memory or a dma-buf (Core.create_remote_tensor,
    Core.import_dmabuf_tensor), or a request's own buffer: ``array`` is its
    memory as a numpy array (no copy), ``device`` the device whose memory it
    is (None: host memory). Bound to a request with InferRequest.set_tensor."""
    _free = _c.vnpu_tensor_free

    @property
    def device(self):
        name = ctypes.c_char_p()
        _check(_c.vnpu_tensor_get_device(self._h, ctypes.byref(name)))
        return _s(name.value)

    @property
    def array(self):
        """The tensor's memory as a numpy array; it holds the tensor."""
        t, s = ctypes.c_int(), _lib.Shape()
        data, size = ctypes.c_void_p(), ctypes.c_uint64()
        _check(_c.vnpu_tensor_get_element_type(self._h, ctypes.byref(t)))
        _check(_c.vnpu_tensor_get_shape(self._h, ctypes.byref(s)))
        _check(_c.vnpu_tensor_get_byte_size(self._h, ctypes.byref(size)))
        _check(_c.vnpu_tensor_get_data(self._h, ctypes.byref(data)))
        if t.value not in _DTYPES:
            raise Error(-6, f"numpy has no {_s(_c.vnpu_element_type_str(t.value))}")
        buf = (ctypes.c_char * size.value).from_address(data.value) if size.value else b""
        array = np.frombuffer(buf, dtype=_DTYPES[t.value]).reshape(s.dims[:s.rank])
        view = array.view(_TensorArray)
        view._vnpu_tensor = self
        return view

    def set_in_fence(self, fd, kind="sync_file"):
        """The next request started with this tensor bound waits, on the
        device, for the fence of @fd ("sync_file" or "syncobj"); the
        caller keeps @fd."""
        _check(_c.vnpu_tensor_set_in_fence(self._h, _fence_kind(kind), int(fd)), "in-fence")

    def export_out_fence(self, kind="sync_file"):
        """A new fd (the caller closes it) of the fence that signals when
        the device has ended the last request that wrote this tensor."""
        fd = ctypes.c_int(-1)
        _check(_c.vnpu_tensor_export_out_fence(self._h, _fence_kind(kind), ctypes.byref(fd)),
               "out-fence")
        return fd.value


class InferRequest(_Handle):
    """One inference at a time, sync (infer) or async (start_async, with
    an optional callback, then wait). Used by one thread at a time."""
    _free = _c.vnpu_infer_request_free

    def __init__(self, handle, compiled):
        super().__init__(handle, compiled)
        self._compiled = compiled
        self._inputs = []           # arrays the request reads until its next run
        self._callback = None       # the ctypes thunk, kept alive while set
        self._lock = threading.Lock()

    def get_tensor(self, name):
        """The request's own buffer of port @name as a numpy array: writing
        an input there or reading an output there copies nothing. Valid
        while the array lives (it holds the tensor)."""
        h = ctypes.c_void_p()
        _check(_c.vnpu_infer_request_get_tensor(self._h, _b(name), ctypes.byref(h)), name)
        return Tensor(h.value).array

    def set_tensor(self, name, tensor):
        """Bind @tensor (a Tensor) as the buffer of port @name: a remote
        tensor of the request's device and the port's type is read or
        written in place, others are copied. Kept until another is set."""
        if not isinstance(tensor, Tensor):
            raise Error(-3, f"{name}: set_tensor takes a vnpu.Tensor, not {type(tensor).__name__}")
        _check(_c.vnpu_infer_request_set_tensor(self._h, _b(name), tensor._h), name)
        self._inputs = [a for a in self._inputs if a[0] != name] + [(name, tensor)]

    def set_input(self, name, array):
        """Use @array for input @name: any numeric dtype the library
        converts (f32, f16, f64, i8, u8, i32, i64, ...), the port's shape.
        The request reads it at each run until another is set."""
        array = np.ascontiguousarray(array)
        t = _type_of(array.dtype, name)
        s = _shape(array.shape)
        h = ctypes.c_void_p()
        _check(_c.vnpu_tensor_create_from_ptr(t, ctypes.byref(s),
                                              array.ctypes.data_as(ctypes.c_void_p),
                                              ctypes.byref(h)), name)
        tensor = Tensor(h.value, array)
        _check(_c.vnpu_infer_request_set_tensor(self._h, _b(name), tensor._h), name)
        self._inputs = [a for a in self._inputs if a[0] != name] + [(name, array)]

    def _set_inputs(self, inputs):
        for name, array in (inputs or {}).items():
            self.set_input(name, array)

    def outputs(self):
        """Every output of the last run, copied: {name: array}."""
        return {p.name: np.array(self.get_tensor(p.name)) for p in self._compiled.outputs}

    def infer(self, inputs=None):
        """Set @inputs ({name: array}), run once, return the outputs."""
        self._set_inputs(inputs)
        _check(_c.vnpu_infer_request_infer(self._h), "infer")
        return self.outputs()

    def set_callback(self, fn):
        """Call fn(request, error) at the end of every later async run, on
        one of the library's threads (error: None or an Error). None
        removes it. Keep it short: callbacks of a process run one at a
        time."""
        if fn is None:
            _check(_c.vnpu_infer_request_set_callback(self._h, _lib.CALLBACK(), None))
            self._callback = None
            return

        def thunk(_req, status, _user):
            fn(self, None if status == 0 else Error(status, "the run failed"))
        cb = _lib.CALLBACK(thunk)
        _check(_c.vnpu_infer_request_set_callback(self._h, cb, None))
        self._callback = cb

    def start_async(self, inputs=None):
        """Set @inputs and start one run; returns at once."""
        self._set_inputs(inputs)
        _check(_c.vnpu_infer_request_start_async(self._h), "start_async")

    def wait(self, timeout_ms=None):
        """Wait for the run (and its callback). With @timeout_ms: False
        when it is still running then."""
        if timeout_ms is None:
            _check(_c.vnpu_infer_request_wait(self._h), "wait")
            return True
        st = _c.vnpu_infer_request_wait_for(self._h, int(timeout_ms))
        if st == -10:
            return False
        _check(st, "wait")
        return True

    def cancel(self):
        _check(_c.vnpu_infer_request_cancel(self._h))

    def get_profiling_info(self):
        """The last run's stages and layers (compiled with
        ENABLE_PROFILING): a list of dicts name, node_type, exec_type,
        executed, real_time_ns."""
        info = ctypes.POINTER(_lib.ProfilingInfo)()
        _check(_c.vnpu_infer_request_get_profiling_info(self._h, ctypes.byref(info)),
               "profiling info")
        try:
            return [{"name": _s(e.name), "node_type": _s(e.node_type),
                     "exec_type": _s(e.exec_type), "executed": e.status == 1,
                     "real_time_ns": e.real_time_ns}
                    for e in info.contents.entries[:info.contents.count]]
        finally:
            _c.vnpu_profiling_info_free(info)


class _TensorArray(np.ndarray):
    """A numpy array over a request's buffer; holds its tensor (views of
    it too)."""
    _vnpu_tensor = None

    def __array_finalize__(self, obj):
        if obj is not None:
            self._vnpu_tensor = getattr(obj, "_vnpu_tensor", None)
