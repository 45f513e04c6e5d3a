"""The OpenAI-compatible chat client against a real local HTTP server with scripted answers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from openai_stub import OpenAIStub, Reply
from ragaudit.errors import (
    ChatRequestError,
    ChatUnavailableError,
    InputError,
    MissingDependencyError,
    PermanentRetrievalError,
    TransientRetrievalError,
)
from ragaudit.llm.chat import ChatClient

SECRET = "sk-test-DO-NOT-LEAK-1234567890"
KEY_ENV = "RAGAUDIT_TEST_CHAT_KEY"


def ask(client: ChatClient, prompt: Any = "hello", **kwargs: Any) -> str:
    return asyncio.run(client.complete(prompt, **kwargs))


def client_for(stub: OpenAIStub, **kwargs: Any) -> ChatClient:
    options: dict[str, Any] = {"timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.01}
    options.update(kwargs)
    return ChatClient(stub.base_url, "stub-model", **options)


def test_returns_the_answer_and_sends_an_openai_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with OpenAIStub(["Paris"]) as stub:
        client = client_for(stub, api_key_env=KEY_ENV)
        answer = ask(
            client, [{"role": "system", "content": "be brief"}, {"role": "user", "content": "capital?"}]
        )
    assert answer == "Paris"
    (request,) = stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {SECRET}"
    assert request.body["model"] == "stub-model"
    assert request.body["temperature"] == 0.0
    assert request.body["messages"][1] == {"role": "user", "content": "capital?"}


def test_a_string_is_one_user_message_and_the_model_can_be_overridden() -> None:
    with OpenAIStub(["ok"]) as stub:
        ask(client_for(stub), "hi", model="other-model", max_tokens=7)
    body = stub.requests[0].body
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["model"] == "other-model"
    assert body["max_tokens"] == 7
    assert "Authorization" not in stub.requests[0].headers


def test_a_url_ending_in_chat_completions_is_accepted() -> None:
    with OpenAIStub(["ok"]) as stub:
        client = ChatClient(stub.base_url + "/chat/completions/", "m", backoff_s=0.01)
        assert ask(client) == "ok"
    assert client.url == stub.base_url + "/chat/completions"


def test_content_given_as_parts_is_joined() -> None:
    body = {
        "choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]
    }
    with OpenAIStub([Reply(body=body)]) as stub:
        assert ask(client_for(stub)) == "ab"


def test_server_error_then_success_is_retried() -> None:
    with OpenAIStub([Reply(status=500), Reply(status=429, headers={"Retry-After": "0"}), "fine"]) as stub:
        client = client_for(stub)
        assert ask(client) == "fine"
    assert len(stub.requests) == 3
    assert client.requests_sent == 3


def test_persistent_server_errors_give_up_after_max_retries() -> None:
    with OpenAIStub([Reply(status=503)] * 5) as stub, pytest.raises(ChatUnavailableError) as caught:
        ask(client_for(stub, max_retries=2))
    assert len(stub.requests) == 3
    assert "HTTP 503" in str(caught.value)
    assert "(3 attempts)" in str(caught.value)
    assert isinstance(caught.value, TransientRetrievalError)


def test_a_timeout_is_retried() -> None:
    with OpenAIStub([Reply(content="late", delay_s=1.0), "on time"]) as stub:
        assert ask(client_for(stub, timeout_s=0.3)) == "on time"
    assert len(stub.requests) == 2


def test_a_client_error_fails_at_once_with_the_servers_message() -> None:
    with OpenAIStub([Reply(status=400), "never sent"]) as stub, pytest.raises(ChatRequestError) as caught:
        ask(client_for(stub))
    assert len(stub.requests) == 1
    assert "HTTP 400" in str(caught.value)
    assert "scripted HTTP 400" in str(caught.value)
    assert isinstance(caught.value, PermanentRetrievalError)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body="this is not json"),
        Reply(body={"choices": []}),
        Reply(body={"choices": [{"message": {"content": None}}]}),
        Reply(body={"object": "list"}),
    ],
    ids=["not-json", "no-choices", "null-content", "wrong-object"],
)
def test_a_malformed_reply_is_a_clear_error(reply: Reply) -> None:
    with OpenAIStub([reply, "never sent"]) as stub, pytest.raises(ChatRequestError, match="malformed reply"):
        ask(client_for(stub))
    assert len(stub.requests) == 1


def test_an_unreachable_server_is_transient() -> None:
    with OpenAIStub() as stub:
        url = stub.base_url
    client = ChatClient(url, "m", max_retries=1, backoff_s=0.01, timeout_s=2.0)
    with pytest.raises(ChatUnavailableError, match="cannot reach"):
        ask(client)
    assert client.requests_sent == 2


def test_the_api_key_never_appears_in_repr_info_errors_or_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    cache = tmp_path / "chat.sqlite"
    with OpenAIStub(
        ["cached answer", Reply(status=401, echo_auth=True), Reply(status=500, echo_auth=True)]
    ) as stub:
        client = client_for(stub, api_key_env=KEY_ENV, max_retries=0, cache=cache)
        assert ask(client, "first") == "cached answer"
        with pytest.raises(ChatRequestError) as refused:
            ask(client, "second")
        with pytest.raises(ChatUnavailableError) as failed:
            ask(client, "third")
        client.close()
    assert "Authorization: Bearer [redacted]" in str(refused.value)  # the server echoed it; we redacted
    assert "api_key_env" in str(refused.value)
    for text in (
        repr(client),
        str(client.info()),
        str(refused.value),
        str(failed.value),
        repr(refused.value),
    ):
        assert SECRET not in text
    assert KEY_ENV in repr(client)
    for file in tmp_path.iterdir():
        assert SECRET.encode() not in file.read_bytes()
    assert not any(SECRET in str(v) for v in vars(client).values())


def test_a_missing_key_variable_is_named_and_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with OpenAIStub(["never"]) as stub, pytest.raises(ChatRequestError, match=KEY_ENV):
        ask(client_for(stub, api_key_env=KEY_ENV))
    assert stub.requests == []


def test_the_key_is_read_at_request_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with OpenAIStub(["ok"]) as stub:
        client = client_for(stub, api_key_env=KEY_ENV)
        monkeypatch.setenv(KEY_ENV, "sk-rotated")
        assert ask(client) == "ok"
    assert stub.requests[0].headers["Authorization"] == "Bearer sk-rotated"


def test_the_cache_answers_repeated_requests(tmp_path: Path) -> None:
    with OpenAIStub(["one", "two"]) as stub:
        client = client_for(stub, cache=tmp_path)
        assert ask(client, "q") == "one"
        assert ask(client, "q") == "one"
        assert ask(client, "other") == "two"
        client.close()
        again = client_for(stub, cache=tmp_path)
        assert ask(again, "q") == "one"
        again.close()
    assert len(stub.requests) == 2
    assert client.cache_hits == 1
    assert again.cache_hits == 1
    assert (tmp_path / "chat.sqlite").is_file()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(InputError, match="not an http"):
        ChatClient("localhost:8000/v1", "m")
    with pytest.raises(InputError, match="model name"):
        ChatClient("http://127.0.0.1:1/v1", " ")
    with pytest.raises(InputError, match="environment variable"):
        ChatClient("http://127.0.0.1:1/v1", "m", api_key_env="")


def test_missing_httpx_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    client = ChatClient("http://127.0.0.1:1/v1", "m")
    with pytest.raises(MissingDependencyError, match=r"ragaudit\[http\]"):
        ask(client)
