"""The labeling workbench's server over real HTTP in its own process: the token, the actions, kill -9 and resume."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Iterator
from pathlib import Path

import pytest

from label_fixtures import LabelServer, small_pool
from ragaudit.labeling.judgments import read_events, read_labels

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


@pytest.fixture
def pool(tmp_path: Path) -> Path:
    return small_pool(tmp_path)


@pytest.fixture
def server(pool: Path, tmp_path: Path) -> Iterator[LabelServer]:
    srv = LabelServer(pool, tmp_path / "judgments" / "ana.jsonl")
    yield srv
    srv.stop()


def _status(srv: LabelServer, method: str, path: str, body: object = None, token: str | None = "") -> int:
    try:
        srv.call(method, path, body, token)
    except urllib.error.HTTPError as exc:
        return exc.code
    return 200


def test_every_route_needs_the_session_token(server: LabelServer, tmp_path: Path) -> None:
    judge = {"case_id": "acme-pricing-001", "chunk_id": "acme-faq-billing", "grade": 2}
    for method, path, body in [
        ("GET", "/", None),
        ("GET", "/api/pool", None),
        ("GET", "/api/state", None),
        ("POST", "/api/judge", judge),
        ("POST", "/api/undo", {}),
    ]:
        assert _status(server, method, path, body, token=None) == 403
        assert _status(server, method, path, body, token="wrong-token") == 403
    assert server.url.startswith("http://127.0.0.1:")
    # nothing was written by the refused requests: only the session's "open" event
    assert [e["kind"] for e in read_events(tmp_path / "judgments" / "ana.jsonl")] == ["open"]


def test_page_is_served_with_the_token_in_the_url_and_a_strict_csp(server: LabelServer) -> None:
    import urllib.request

    with urllib.request.urlopen(server.url, timeout=10) as answer:
        html = answer.read().decode()
        csp = answer.headers["Content-Security-Policy"]
    assert "ragaudit label" in html
    assert "default-src 'none'" in csp
    assert "__NONCE__" not in html


def test_actions_are_saved_acknowledged_and_validated(server: LabelServer, tmp_path: Path) -> None:
    pool = server.call("GET", "/api/pool")
    assert pool["annotator"] == "ana"
    assert pool["scale"]["3"] == "authoritative and complete"
    case = pool["cases"][0]
    cand = next(c for c in case["candidates"] if c["chunk_id"] == "acme-faq-billing")
    pair = server.call(
        "POST", "/api/judge", {"case_id": case["case_id"], "chunk_id": "acme-faq-billing", "grade": 1}
    )
    assert pair["judgment"] == {"grade": 1, "superseded": False}
    text = cand["text"]
    start = text.index("## ")
    pair = server.call(
        "POST",
        "/api/span",
        {"case_id": case["case_id"], "chunk_id": "acme-faq-billing", "start": start, "end": start + 10},
    )
    assert pair["spans"][0]["start"] == start and pair["spans"][0]["end"] == start + 10
    sup = server.call(
        "POST",
        "/api/judge",
        {
            "case_id": case["case_id"],
            "chunk_id": "acme-pricing-professional-v2",
            "grade": 0,
            "superseded": True,
        },
    )
    assert sup["judgment"] == {"grade": 0, "superseded": True}
    assert server.call(
        "POST", "/api/unanswerable", {"case_id": "initech-unanswerable-001", "value": True}
    ) == {
        "case_id": "initech-unanswerable-001",
        "unanswerable": True,
    }
    # refused: a grade outside 0-3, an unknown candidate, a span past the text, superseded with a grade
    bad = [
        {"case_id": case["case_id"], "chunk_id": "acme-faq-billing", "grade": 4},
        {"case_id": case["case_id"], "chunk_id": "nope", "grade": 1},
        {"case_id": case["case_id"], "chunk_id": "acme-faq-billing", "grade": 2, "superseded": True},
    ]
    for body in bad:
        assert _status(server, "POST", "/api/judge", body) == 400
    span = {"case_id": case["case_id"], "chunk_id": "acme-faq-billing", "start": 5, "end": len(text) + 1}
    assert _status(server, "POST", "/api/span", span) == 400
    # undo walks back: the unanswerable mark first, then the superseded grade
    assert server.call("POST", "/api/undo", {})["case"]["unanswerable"] is False
    undone = server.call("POST", "/api/undo", {})
    assert undone["undone"]["chunk_id"] == "acme-pricing-professional-v2"
    assert undone["pair"]["judgment"] is None
    state = server.call("GET", "/api/state")
    assert [(p["chunk_id"], p["judgment"]) for p in state["pairs"]] == [
        ("acme-faq-billing", {"grade": 1, "superseded": False})
    ]
    labels = read_labels(tmp_path / "judgments" / "ana.jsonl")
    (span_event,) = labels.state.spans[(case["case_id"], "acme-faq-billing")]
    assert (span_event["doc_id"], span_event["start"], span_event["end"]) == (
        "acme-faq-billing",
        start,
        start + 10,
    )
    assert all(e["annotator"] == "ana" and e["time"].endswith("Z") for e in labels.events)


def test_kill_9_loses_no_acknowledged_judgment_and_restart_resumes(pool: Path, tmp_path: Path) -> None:
    out = tmp_path / "judgments" / "ana.jsonl"
    srv = LabelServer(pool, out)
    acknowledged = []
    try:
        for case in srv.call("GET", "/api/pool")["cases"]:
            for cand in case["candidates"]:
                if cand["prior_grade"] is None:
                    srv.call(
                        "POST",
                        "/api/judge",
                        {"case_id": case["case_id"], "chunk_id": cand["chunk_id"], "grade": 2},
                    )
                    acknowledged.append((case["case_id"], cand["chunk_id"]))
    finally:
        srv.kill()
    assert srv.proc.returncode == -9
    assert len(acknowledged) == 4
    # a torn line, as a kill in the middle of a write leaves it (never acknowledged)
    with out.open("ab") as handle:
        handle.write(b'{"seq": 99, "kind": "grade", "annotat')
    again = LabelServer(pool, out)
    try:
        state = again.call("GET", "/api/state")
        assert sorted((p["case_id"], p["chunk_id"]) for p in state["pairs"]) == sorted(acknowledged)
        assert "4 judgments already there" in "".join(again.lines)
        again.call("POST", "/api/undo", {})  # undo reaches back into the earlier session
        assert len(again.call("GET", "/api/state")["pairs"]) == 3
    finally:
        again.stop()
    lines = out.read_bytes().splitlines()
    assert all(json.loads(line)["seq"] == i for i, line in enumerate(lines, start=1))


def test_a_second_annotator_needs_their_own_file(pool: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    from label_fixtures import SRC

    out = tmp_path / "ana.jsonl"
    srv = LabelServer(pool, out)
    srv.stop()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragaudit.cli.main",
            "label",
            str(pool),
            "--out",
            str(out),
            "--annotator",
            "bob",
            "--no-browser",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert done.returncode == 2
    assert "holds the judgments of ana" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_foreign_host_header_is_refused(server: LabelServer) -> None:
    """No DNS rebinding: a page served under another name cannot reach the API, token or not."""
    import urllib.request

    request = urllib.request.Request(
        server.base + "/api/state", headers={"X-Ragaudit-Token": server.token, "Host": "evil.example"}
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 400


def test_missing_server_libraries_name_the_pip_command(
    pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from ragaudit.cli.main import main

    monkeypatch.setitem(sys.modules, "starlette", None)
    assert main(["label", str(pool), "--out", str(tmp_path / "j.jsonl"), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'ragaudit[label]'" in err
    assert not (tmp_path / "j.jsonl").exists()


def test_two_annotators_label_the_same_pool_at_once_into_their_own_files(pool: Path, tmp_path: Path) -> None:
    ana = LabelServer(pool, tmp_path / "ana.jsonl", "ana")
    bob = LabelServer(pool, tmp_path / "bob.jsonl", "bob")
    try:
        assert ana.base != bob.base and ana.token != bob.token
        assert _status(ana, "GET", "/api/state", token=bob.token) == 403  # one session's token opens only it
        pair = {"case_id": "acme-pricing-001", "chunk_id": "acme-faq-billing"}
        ana.call("POST", "/api/judge", {**pair, "grade": 1})
        bob.call("POST", "/api/judge", {**pair, "grade": 3})
    finally:
        ana.stop()
        bob.stop()
    grades = {
        name: read_labels(tmp_path / f"{name}.jsonl").state.grades[("acme-pricing-001", "acme-faq-billing")][
            "grade"
        ]
        for name in ("ana", "bob")
    }
    assert grades == {"ana": 1, "bob": 3}


def test_the_workbench_socket_lets_asyncio_set_tcp_nodelay() -> None:
    """As ``ragaudit serve``'s (tests/test_serve.py): without IPPROTO_TCP named, asyncio leaves Nagle on
    and every answer to the page waits for the browser's delayed ACK."""
    import socket

    from ragaudit.labeling.server import bind_loopback

    sock = bind_loopback(0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
