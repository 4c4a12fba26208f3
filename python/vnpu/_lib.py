# SPDX-License-Identifier: MIT
"""ctypes declarations of libvnpu's public C API (<vnpu/vnpu.h>): the
structs, the functions this package calls and how the library is found."""
import ctypes
import os

MAX_RANK = 8


class Shape(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_uint32), ("dims", ctypes.c_int64 * MAX_RANK)]


class Port(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("shape", Shape),
                ("index", ctypes.c_uint32), ("is_output", ctypes.c_int)]


class PropertyValue(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("integer", ctypes.c_int64),
                ("range", ctypes.c_uint32 * 3), ("count", ctypes.c_uint32),
                ("items", ctypes.POINTER(ctypes.c_char_p)),
                ("writable", ctypes.POINTER(ctypes.c_uint8)), ("text", ctypes.c_char_p)]


class ProfilingEntry(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("node_type", ctypes.c_char_p),
                ("exec_type", ctypes.c_char_p), ("status", ctypes.c_int),
                ("real_time_ns", ctypes.c_uint64)]


class ProfilingInfo(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint32), ("entries", ctypes.POINTER(ProfilingEntry))]


P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)
CALLBACK = ctypes.CFUNCTYPE(None, P, ctypes.c_int, P)

# name: (argument types); every call returns a vnpu_status (int) but those
# listed in VOID or with their own restype.
SIGNATURES = {
    "vnpu_core_create": [PP],
    "vnpu_core_get_available_devices": [P, ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)),
                                        ctypes.POINTER(ctypes.c_uint32)],
    "vnpu_core_get_property": [P, ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.POINTER(ctypes.POINTER(PropertyValue))],
    "vnpu_core_set_property_str": [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p],
    "vnpu_core_read_model": [P, ctypes.c_char_p, PP],
    "vnpu_core_read_model_from_memory": [P, ctypes.c_char_p, ctypes.c_size_t, PP],
    "vnpu_core_compile_model": [P, P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), PP],
    "vnpu_core_import_model": [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, PP],
    "vnpu_model_get_inputs_size": [P, ctypes.POINTER(ctypes.c_size_t)],
    "vnpu_model_get_outputs_size": [P, ctypes.POINTER(ctypes.c_size_t)],
    "vnpu_model_input_name": [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)],
    "vnpu_model_output_name": [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)],
    "vnpu_model_input_type": [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)],
    "vnpu_model_output_type": [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)],
    "vnpu_model_input_shape": [P, ctypes.c_size_t, ctypes.POINTER(Shape)],
    "vnpu_model_output_shape": [P, ctypes.c_size_t, ctypes.POINTER(Shape)],
    "vnpu_model_reshape": [P, ctypes.c_char_p, ctypes.POINTER(Shape)],
    "vnpu_model_input_index": [P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t)],
    "vnpu_model_input_decides_shapes": [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)],
    "vnpu_model_freeze_input": [P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(Shape), P,
                                ctypes.c_size_t],
    "vnpu_compiled_model_get_num_inputs": [P, ctypes.POINTER(ctypes.c_uint32)],
    "vnpu_compiled_model_get_num_outputs": [P, ctypes.POINTER(ctypes.c_uint32)],
    "vnpu_compiled_model_get_input": [P, ctypes.c_uint32, ctypes.POINTER(Port)],
    "vnpu_compiled_model_get_output": [P, ctypes.c_uint32, ctypes.POINTER(Port)],
    "vnpu_compiled_model_get_property": [P, ctypes.c_char_p,
                                         ctypes.POINTER(ctypes.POINTER(PropertyValue))],
    "vnpu_compiled_model_export": [P, PP, ctypes.POINTER(ctypes.c_size_t)],
    "vnpu_compiled_model_create_infer_request": [P, PP],
    "vnpu_infer_request_get_tensor": [P, ctypes.c_char_p, PP],
    "vnpu_infer_request_set_tensor": [P, ctypes.c_char_p, P],
    "vnpu_infer_request_infer": [P],
    "vnpu_infer_request_start_async": [P],
    "vnpu_infer_request_wait": [P],
    "vnpu_infer_request_wait_for": [P, ctypes.c_int64],
    "vnpu_infer_request_set_callback": [P, CALLBACK, P],
    "vnpu_infer_request_cancel": [P],
    "vnpu_infer_request_get_profiling_info": [P, ctypes.POINTER(ctypes.POINTER(ProfilingInfo))],
    "vnpu_tensor_create_from_ptr": [ctypes.c_int, ctypes.POINTER(Shape), P, PP],
    "vnpu_tensor_get_element_type": [P, ctypes.POINTER(ctypes.c_int)],
    "vnpu_tensor_get_shape": [P, ctypes.POINTER(Shape)],
    "vnpu_tensor_get_byte_size": [P, ctypes.POINTER(ctypes.c_uint64)],
    "vnpu_tensor_get_data": [P, PP],
    "vnpu_core_create_remote_tensor": [P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(Shape),
                                       P, PP],
    "vnpu_core_import_dmabuf_tensor": [P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(Shape),
                                       ctypes.c_int, PP],
    "vnpu_tensor_set_in_fence": [P, ctypes.c_int, ctypes.c_int],
    "vnpu_tensor_export_out_fence": [P, ctypes.c_int, ctypes.POINTER(ctypes.c_int)],
    "vnpu_tensor_get_device": [P, ctypes.POINTER(ctypes.c_char_p)],
}
VOID = {
    "vnpu_core_free": [P], "vnpu_model_free": [P], "vnpu_compiled_model_free": [P],
    "vnpu_infer_request_free": [P], "vnpu_tensor_free": [P], "vnpu_free": [P],
    "vnpu_property_value_free": [ctypes.POINTER(PropertyValue)],
    "vnpu_profiling_info_free": [ctypes.POINTER(ProfilingInfo)],
}
TEXT = {"vnpu_status_str": [ctypes.c_int], "vnpu_last_error": [],
        "vnpu_get_version": [], "vnpu_element_type_str": [ctypes.c_int]}


def _candidates():
    """$VNPU_LIBRARY, the library this package was installed with, then the
    dynamic linker's search (ldconfig's cache, LD_LIBRARY_PATH)."""
    env = os.environ.get("VNPU_LIBRARY")
    if env:
        return [env]
    found = []
    try:
        from . import _paths
        found.append(_paths.LIBRARY)
    except ImportError:
        pass
    return found + ["libvnpu.so.0"]


def load():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise ImportError("cannot load libvnpu (set VNPU_LIBRARY to libvnpu.so.0): "
                          + "; ".join(errors))
    for table, restype in ((SIGNATURES, ctypes.c_int), (VOID, None), (TEXT, ctypes.c_char_p)):
        for name, args in table.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = restype
    return lib
