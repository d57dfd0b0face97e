"""The JSON-RPC protocol's answers to messages that do not fit their method
(``lsp_server.protocol``), in process: a malformed request gets an error response at once, a
notification sent as a request is refused, a malformed notification is dropped, and a
well-formed message goes on to its handler."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lsp_server.protocol import REJECTED, RepomemProtocol

INVALID_PARAMS, INVALID_REQUEST = -32602, -32600


class Written:
    """The protocol's output, one JSON message per write."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data))

    def close(self) -> None:
        pass


@pytest.fixture
def protocol() -> tuple[RepomemProtocol, Written]:
    server = LanguageServer("test", "0", protocol_cls=RepomemProtocol)
    written = Written()
    server.protocol.set_writer(written, include_headers=False)
    assert isinstance(server.protocol, RepomemProtocol)
    return server.protocol, written


def _request(msg_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def test_a_malformed_request_is_answered_with_invalid_params(protocol) -> None:
    proto, written = protocol
    data = _request(7, types.TEXT_DOCUMENT_COMPLETION, {"textDocument": 3})
    assert proto.structure_message(data) is REJECTED
    (answer,) = written.messages
    assert answer["id"] == 7
    assert answer["error"]["code"] == INVALID_PARAMS
    assert types.TEXT_DOCUMENT_COMPLETION in answer["error"]["message"]
    proto.handle_message(REJECTED)  # goes no further, raises nothing
    assert len(written.messages) == 1


def test_a_notification_sent_as_a_request_is_refused(protocol) -> None:
    proto, written = protocol
    params = {
        "textDocument": {"uri": "file:///a.py", "languageId": "python", "version": 1, "text": ""}
    }
    assert proto.structure_message(_request("x", types.TEXT_DOCUMENT_DID_OPEN, params)) is REJECTED
    (answer,) = written.messages
    assert answer["id"] == "x" and answer["error"]["code"] == INVALID_REQUEST
    assert "is a notification" in answer["error"]["message"]


def test_a_malformed_notification_is_dropped_without_an_answer(protocol) -> None:
    proto, written = protocol
    data = {"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_DID_CHANGE, "params": {"x": 1}}
    assert proto.structure_message(data) is REJECTED
    assert written.messages == []


def test_well_formed_messages_pass_typed(protocol) -> None:
    proto, written = protocol
    params = {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 1}}
    message = proto.structure_message(_request(1, types.TEXT_DOCUMENT_COMPLETION, params))
    assert isinstance(message, types.CompletionRequest)
    assert message.params.position.character == 1
    # params are optional in JSON-RPC: a request without them is still read
    bare = {"jsonrpc": "2.0", "id": 2, "method": types.SHUTDOWN}
    assert isinstance(proto.structure_message(bare), types.ShutdownRequest)
    assert written.messages == []
