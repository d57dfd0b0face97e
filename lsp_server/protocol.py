"""The JSON-RPC protocol with an answer for requests whose params do not fit their method.

pygls drops a message it cannot turn into its typed form and only logs it, so a client that
sent a malformed request would wait forever for the answer. Here such a request gets an
``InvalidParams`` error response, a notification method sent with an id (as a request) gets an
``InvalidRequest`` error response, a malformed notification is logged in one line, and the
server carries on.

pygls 2 files the future of every handler it runs under a message id in ``_request_futures``,
so that ``$/cancelRequest`` and ``shutdown`` can find it, but only the answer to a client's
request takes it out again. Notifications (each ``didChange``, under a fresh id) and the steps
of pygls's built-in handlers stayed there for good: about 2 KB per keystroke, for as long as the
server runs. Here every future leaves the table once it is done; ``shutdown`` cancels what
still runs from a copy of the table, a built-in handler whose step (one of ours) was cancelled
ends cancelled, and the client's late answer to a request the server gave up on is dropped,
all without a traceback in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from functools import partial
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import MsgId

logger = logging.getLogger(__name__)


class _Rejected:
    """Stands in for a message that could not be read; it is not handled any further."""

    jsonrpc = "rejected"


REJECTED = _Rejected()


class RepomemProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data or "method" not in data:
            return super().structure_message(data)
        if "id" in data and "params" not in data:
            # params are optional in JSON-RPC; pygls would drop such a request unanswered
            data = {**data, "params": None}
        method = data.get("method")
        message_type = self.get_message_type(method) if isinstance(method, str) else None
        if message_type is None:
            return super().structure_message(data)
        try:
            message = self._converter.structure(data, message_type)
        except Exception as exc:  # cattrs raises several kinds for malformed input
            reason = _first_line(exc)
            if "id" in data:
                msg_id = data["id"] if isinstance(data["id"], str | int) else None
                logger.warning("rejected request %r (%s): %s", msg_id, method, reason)
                error = JsonRpcInvalidParams(f"invalid params for {method}: {reason}")
                self._send_response(msg_id, error=error.to_response_error())
            else:
                logger.warning("ignored notification %s: invalid params: %s", method, reason)
            return REJECTED
        if "id" in data and not hasattr(message, "id"):
            # a notification sent as a request: answer it, as every request must be
            msg_id = data["id"] if isinstance(data["id"], str | int) else None
            logger.warning("rejected request %r: %s is a notification", msg_id, method)
            error = JsonRpcInvalidRequest(f"{method} is a notification, not a request")
            self._send_response(msg_id, error=error.to_response_error())
            return REJECTED
        return message

    def handle_message(self, message: Any) -> None:
        if message is REJECTED:
            return
        super().handle_message(message)

    def _execute_handler(
        self,
        msg_id: MsgId,
        handler: Callable[..., Any],
        callback: Callable[..., Any],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            # runs after pygls's own callback (which answers a request), at once if already done
            future.add_done_callback(partial(self._forget_future, msg_id))

    def _run_generator(
        self,
        future: Future[Any] | None,
        *,
        gen: Generator[Any, Any, Any],
        result_future: Future[Any],
    ) -> None:
        """pygls's next step of a built-in handler (``initialized`` runs ours as a step), but a
        cancelled step cancels the handler: pygls read the cancelled step's result in a loop
        callback, and the ``CancelledError`` it raised was logged with its traceback (on
        ``shutdown``, which cancels every handler still running)."""
        if future is not None and future.cancelled():
            gen.close()
            result_future.cancel()
            return
        super()._run_generator(future, gen=gen, result_future=result_future)

    def _forget_future(self, msg_id: MsgId, future: object) -> None:
        if self._request_futures.get(msg_id) is future:
            self._request_futures.pop(msg_id, None)

    def _handle_response(
        self, msg_id: MsgId, result: Any | None = None, error: Any | None = None
    ) -> None:
        """pygls's, but the answer to a request of the server's that nothing awaits any more
        (cancelled by ``shutdown``, or after a time-out) is dropped: pygls set it on the
        cancelled future, which raised InvalidStateError and logged a traceback."""
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            del self._request_futures[msg_id]
            logger.debug("dropped the answer to %s: nothing awaits it any more", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls's ``shutdown``, cancelling the handlers still running from a copy of the
        table: cancelling the future of a built-in handler (``initialized``,
        ``workspace/executeCommand``) runs its callbacks at once, and they take it out of the
        table pygls was walking (RuntimeError: dictionary changed size during iteration)."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    detail = text[0] if text else type(exc).__name__
    causes = getattr(exc, "exceptions", None)
    if causes:
        detail = f"{detail}: {_first_line(causes[0])}"
    return detail[:300]
