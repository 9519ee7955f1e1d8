"""Jinja's environment with each printed value escaped and scrubbed in one call."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from types import FunctionType, MethodType
from typing import Any

import jinja2
from jinja2.compiler import CodeGenerator
from jinja2.runtime import Context
from jinja2.utils import internalcode

from sitegen.text.htmlsafe import print_html


class PrintingCodeGenerator(CodeGenerator):
    """Compile ``{{ value }}`` to one call of ``print_html``, not ``escape(finalize(…))``."""

    # Jinja's own code where autoescape is off or decided at render time: only the common
    # case, autoescape on, is a hundred calls a page.
    def _output_child_pre(self, node: Any, frame: Any, finalize: Any) -> None:
        """Open the call that prints a value."""
        if frame.eval_ctx.volatile or not frame.eval_ctx.autoescape:
            super()._output_child_pre(node, frame, finalize)
        else:
            self.write("environment.print_html(")

    def _output_child_post(self, node: Any, frame: Any, finalize: Any) -> None:
        """Close the call that prints a value."""
        if frame.eval_ctx.volatile or not frame.eval_ctx.autoescape:
            super()._output_child_post(node, frame, finalize)
        else:
            self.write(")")


class PlainCallContext(Context):
    """A template context that calls plain functions and methods directly."""

    @internalcode
    def call(self, obj: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Call ``obj`` as Jinja does; a plain function or method straight away."""
        # Jinja asks every callable whether it takes the context, through four attribute
        # lookups (two of them failing), on each of the dozens of calls a page makes.
        kind = obj.__class__
        if kind is MethodType:
            function = obj.__func__  # type: ignore[attr-defined]
        elif kind is FunctionType:
            function = obj
        else:  # callable objects, macros, builtins: Jinja's own way
            return super().call(obj, *args, **kwargs)
        # ``pass_context``, ``pass_eval_context`` and ``pass_environment`` mark a function so.
        if function.__class__ is not FunctionType or "jinja_pass_arg" in function.__dict__:
            return super().call(obj, *args, **kwargs)
        kwargs.pop("_block_vars", None)
        kwargs.pop("_loop_vars", None)
        try:
            return obj(*args, **kwargs)
        except StopIteration:
            return self.environment.undefined(
                "value was undefined because a callable raised a StopIteration exception"
            )


class PrintingEnvironment(jinja2.Environment):
    """A Jinja environment whose templates print through ``print_html``.

    ``print_html`` is ``htmlsafe.finalize`` and escaping in one: the environment is made with
    that ``finalize`` (``render.templates.environment``), which Jinja still applies to the
    templates' constants when it compiles them.
    """

    code_generator_class = PrintingCodeGenerator
    context_class = PlainCallContext
    print_html = staticmethod(print_html)

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        """Return a template's globals as one dict: the environment's, then its own."""
        # Jinja's ChainMap is read through Python-level methods each time a page is
        # rendered (copied into the page's context, its keys into a set): a dict is copied
        # in C. The environment's globals are all set before the first template loads.
        return {**self.globals, **(d or {})}
