"""Load a user's retriever from ``module:factory`` (or ``path/to/file.py:factory``).

The part after the colon names an attribute of the module (dotted for nesting): a factory (function
or class) called with the given keyword arguments, or, when no arguments are given, a ready object.
What comes out must have an ``async def search(*, tenant_id, query, top_k)``; every failure along
the way (module not found, import failing inside the module, missing attribute, factory raising,
wrong kind of object) is an :class:`~ragaudit.errors.InputError` that says what to fix.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ragaudit.errors import InputError
from ragaudit.retrieval.protocol import Retriever, check_retriever

_FORM = "module:factory, e.g. mypkg.search:make_retriever or ./my_retriever.py:make_retriever"


def _fail(spec: str, message: str, fix: str) -> InputError:
    return InputError(spec, None, message, fix)


def _is_file(module: str) -> bool:
    return module.endswith(".py") or "/" in module or "\\" in module


def _import_file(spec: str, module: str) -> ModuleType:
    path = Path(module).expanduser().resolve()
    if not path.is_file():
        raise _fail(
            spec, f"plugin file {module!r} not found", "check the path (relative to the current directory)"
        )
    name = f"ragaudit_plugin_{path.stem}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise _fail(spec, f"cannot load {module!r} as Python", "name a .py file")
    loaded = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = loaded
    try:
        loader_spec.loader.exec_module(loaded)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise _fail(
            spec,
            f"importing {module!r} failed: {type(exc).__name__}: {exc}",
            "fix the error in the plugin file",
        ) from None
    return loaded


def _import(spec: str, module: str) -> ModuleType:
    if _is_file(module):
        return _import_file(spec, module)
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise _fail(
                spec,
                f"module {module!r} not found",
                "run from the folder that holds it, install it, add its folder to PYTHONPATH, or give a file "
                "path: ./file.py:factory",
            ) from None
        raise _fail(
            spec, f"importing {module!r} failed: {exc}", f"install {exc.name!r} for the plugin"
        ) from None
    except Exception as exc:
        raise _fail(
            spec,
            f"importing {module!r} failed: {type(exc).__name__}: {exc}",
            "fix the error in the plugin module",
        ) from None


def _attribute(spec: str, module: ModuleType, dotted: str) -> Any:
    obj: Any = module
    for part in dotted.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n, None)))
            shown = ", ".join(public[:12]) + (" ..." if len(public) > 12 else "")
            raise _fail(
                spec,
                f"{module.__name__!r} has no attribute {dotted!r}",
                f"callables found there: {shown or 'none'}",
            )
        obj = getattr(obj, part)
    return obj


def _has_async_search(obj: object) -> bool:
    return inspect.iscoroutinefunction(getattr(obj, "search", None))


def load_plugin(spec: str, **kwargs: Any) -> Retriever:
    """Import ``spec`` (``module:factory``) and return the retriever it makes."""
    module_name, colon, attr = spec.strip().rpartition(":")
    if not colon or not module_name or not attr:
        raise _fail(spec, "expected module:factory", _FORM)
    target = _attribute(spec, _import(spec, module_name), attr)
    if not inspect.isclass(target) and _has_async_search(target) and not kwargs:
        return check_retriever(target, spec)
    if not callable(target):
        raise _fail(spec, f"{attr!r} is a {type(target).__name__}, not a factory or retriever", _FORM)
    try:
        made = target(**kwargs)
    except Exception as exc:
        raise _fail(
            spec,
            f"calling {attr}({', '.join(kwargs)}) failed: {type(exc).__name__}: {exc}",
            "check the plugin's arguments",
        ) from None
    if inspect.isawaitable(made):
        if inspect.iscoroutine(made):
            made.close()
        raise _fail(
            spec,
            f"{attr!r} is async; the factory must return the retriever directly",
            "make the factory a plain def",
        )
    return check_retriever(made, spec)


def load_attribute(spec: str) -> Any:
    """The object ``spec`` (``module:attribute`` or ``path/to/file.py:attribute``) names, imported."""
    module_name, colon, attr = spec.strip().rpartition(":")
    if not colon or not module_name or not attr:
        raise _fail(spec, "expected module:attribute", "e.g. mypkg.stages:MyReranker")
    return _attribute(spec, _import(spec, module_name), attr)
