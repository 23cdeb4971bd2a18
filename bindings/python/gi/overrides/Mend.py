# SPDX-License-Identifier: LGPL-2.1-or-later
"""PyGObject overrides for libmend.

Mend.Sender: a sender written in Python makes its Gio.Task the way every
asynchronous Python method does, ``Gio.Task.new(self, cancellable,
callback, user_data)``. PyGObject hands a Python ``do_send_async`` a
callback that already carries its data and takes two arguments, so given
``user_data`` again the task would call it with three and the turn would
never end. The override gives the method a callback that takes the data
and drops it, so that the two-argument form
(``Gio.Task.new(self, cancellable, callback)``) and the natural one both
work.
"""

from ..module import get_introspection_module
from ..overrides import override

Mend = get_introspection_module("Mend")

__all__ = []


def _natural_send_async(send_async):
    def do_send_async(self, turn, attempt, io_priority, cancellable, callback, user_data):
        def on_done(source, result, *data):
            # The data is the callback's own already.
            callback(source, result)

        return send_async(self, turn, attempt, io_priority, cancellable, on_done, user_data)

    do_send_async.__name__ = send_async.__name__
    do_send_async.__qualname__ = send_async.__qualname__
    do_send_async.__doc__ = send_async.__doc__
    do_send_async._mend_natural = True
    return do_send_async


class Sender(Mend.Sender):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Before PyGObject hooks up the class's virtual methods.
        send_async = cls.__dict__.get("do_send_async")
        if send_async is not None and not getattr(send_async, "_mend_natural", False):
            cls.do_send_async = _natural_send_async(send_async)


Sender = override(Sender)
__all__.append("Sender")
