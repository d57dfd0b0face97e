"""The JSON-RPC protocol with an answer for requests whose params do not fit their method.

pygls drops a message it cannot turn into its typed form and only logs it, so a client that
sent a malformed request would wait forever for the answer. Here such a request gets an
``InvalidParams`` error response, a notification method sent with an id (as a request) gets an
``InvalidRequest`` error response, a malformed notification is logged in one line, and the
server carries on.
"""

from __future__ import annotations

import logging
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

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


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    detail = text[0] if text else type(exc).__name__
    causes = getattr(exc, "exceptions", None)
    if causes:
        detail = f"{detail}: {_first_line(causes[0])}"
    return detail[:300]
