"""README command 1 as a new user runs it: start, log in, create/rename/delete a guru in the admin."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.pdfs import write_pdf
from tests.support.git_servers import free_port
from tests.support.processes import descendants, running
from tests.support.product import (
    REPO,
    Browser,
    Product,
    ask_on_guru_page,
    child_pid,
    create_guru,
    environment,
    eventually,
    launch,
    manage,
    stop,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Product]:
    # A first start as a new user's: it migrates and collects itself (other launch tests start from a copy).
    running = launch(tmp_path_factory.mktemp("embedded") / "data", new_install=True)
    yield running
    stop(running)


def _collections(product: Product) -> str:
    return manage(product, "collections")


def test_new_user_journey(product: Product) -> None:
    browser = Browser(product.url)
    assert "Log in" in browser.get("/")
    home = browser.submit("/accounts/login/", {"username": product.username, "password": product.password})
    assert "All gurus" in home  # the first account is the administrator

    browser.submit("/dashboard/gurus/new/", {
        "slug": "celery-guru", "name": "Celery Guru", "domain_knowledge": "Celery task queue",
        "base_color": "#1f6feb", "language": "en", "active": "on",
    })
    eventually(lambda: 'class="badge ok">ready<' in browser.get("/"), "collection")
    assert "guru_celery_guru" in browser.get("/dashboard/g/celery-guru/settings/")
    assert re.search(r"celery-guru\s+guru_celery_guru\s+384\s+0\s+ok", _collections(product))

    # The worker process indexes with the real local embedder while the command watches progress.
    pdf = write_pdf(product.data_dir.parent / "manual.pdf",
                    [[f"Line {i}: the visibility timeout redelivers unacknowledged tasks." for i in range(30)]])
    out = manage(product, "add_source", "celery-guru", str(pdf))
    chunks = int(re.search(r"Indexed (\d+) chunks from manual.pdf", out).group(1))  # type: ignore[union-attr]
    progress = [line for line in out.splitlines() if line.startswith("[")]
    assert "\r" not in out and progress and len(progress) == len(set(progress)), out  # piped: a line per change
    assert chunks > 0
    # Then the worker summarises the page: one more row (its summary, also the guru's) beside the chunks.
    rows = chunks + 1
    eventually(lambda: re.search(rf"celery-guru\s+guru_celery_guru\s+384\s+{rows}\s+ok", _collections(product))
               is not None, "the source's summary row")

    guru_id = re.search(r"/admin/gurus/guru/(\d+)/change/", browser.get("/admin/gurus/guru/")).group(1)
    change = f"/admin/gurus/guru/{guru_id}/change/"
    browser.submit(change, {"slug": "celery-docs", "name": "Celery Guru", "domain_knowledge": "Celery",
                            "base_color": "#1f6feb", "language": "en", "active": "on", "_save": "Save"})
    eventually(lambda: "guru_celery_docs" in _collections(product), "rename")
    assert "guru_celery_guru " not in _collections(product)
    assert f"guru_celery_docs: {rows} rows (chunks and summaries), 384-d, loaded" in browser.get(change)

    browser.submit(f"/admin/gurus/guru/{guru_id}/delete/", {"post": "yes"})
    eventually(lambda: "No gurus yet" in _collections(product), "drop")


def test_a_pdf_manual_is_answered_without_its_running_heads(product: Product) -> None:
    # The worker reads the PDF (running heads and page numbers stripped), the web process answers offline: the
    # answer quotes the page's text and none of the furniture.
    create_guru(product, "pumps", "Pumps", "Pump manual")
    pages = [["Pump Manual", f"Section {n} describes part {n} of the pump.", f"- {n} -"] for n in range(1, 5)]
    pages[2][1:2] = ["If the pump leaks at the shaft, replace the seal before restarting the pump."]
    manage(product, "add_source", "pumps", str(write_pdf(product.data_dir.parent / "pumps.pdf", pages)))
    events = ask_on_guru_page(product, "pumps", "The pump leaks at the shaft. What should I replace?")
    assert events[-1][0] == "done", events[-3:]
    text = "".join(str(data.get("text", "")) for kind, data in events if kind == "delta")
    assert "**pumps.pdf — page 3** [1]" in text and "replace the seal before restarting the pump" in text
    assert "Pump Manual" not in text and "- 3 -" not in text


def test_static_files_are_collected_and_sent_compressed(product: Product) -> None:
    assert (product.data_dir / "static" / "css" / "app.css.gz").exists()
    request = urllib.request.Request(product.url + "/static/css/app.css", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        assert "max-age" in response.headers["Cache-Control"]


def _niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_ingestion_runs_at_a_lower_cpu_priority_than_answering(product: Product) -> None:
    worker, web = child_pid(product, b"worker"), child_pid(product, b"uvicorn")
    assert worker is not None and web is not None
    eventually(lambda: _niceness(worker) == _niceness(web) + 10, "the worker to lower its priority")


def test_a_second_start_on_the_same_data_dir_says_so_and_leaves_the_first_alone(product: Product) -> None:
    result = subprocess.run([sys.executable, "-m", "backend.launcher", "--port", str(free_port())], cwd=REPO,
                            env=environment(product.data_dir), capture_output=True, text=True, timeout=120)
    said = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in said, said
    assert f"already running with the data dir {product.data_dir.resolve()} (pid {product.process.pid}, " \
           f"{product.url}/)" in said
    # It started and removed nothing: the running instance keeps its sidecar's address for `./openguru manage`.
    assert (product.data_dir / "run.env").exists() and product.process.poll() is None
    assert "vector store unavailable" not in _collections(product)


def test_a_port_another_program_listens_on_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as other:  # another dev server on the port the user chose
        port = other.getsockname()[1]
        data_dir = tmp_path / "data"
        result = subprocess.run([sys.executable, "-m", "backend.launcher", "--port", str(port)], cwd=REPO,
                                env=environment(data_dir), capture_output=True, text=True, timeout=120)
    said = result.stdout + result.stderr
    assert result.returncode == 1 and f"Port {port} on 127.0.0.1 is already in use" in said, said
    assert "OpenGuru is running" not in said and "started" not in said
    assert not (data_dir / "run.env").exists() and not (data_dir / "logs").exists()


def test_a_launcher_killed_outright_takes_every_process_it_started_with_it(tmp_path: Path) -> None:
    killed = launch(tmp_path / "data")
    try:
        named = {child_pid(killed, marker) for marker in (b"worker", b"chat_listeners", b"uvicorn", b"--data-dir")}
        assert None not in named
        eventually(lambda: len(descendants(killed.process.pid)) > len(named) + 1, "the worker's pool and beat")
        started = [pid for pid in descendants(killed.process.pid) if pid != killed.process.pid]
    except BaseException:
        stop(killed)
        raise
    killed.process.kill()  # kill -9, the OOM killer, a closed IDE: no Ctrl-C handler runs
    killed.process.wait()
    eventually(lambda: not any(running(pid) for pid in started), "every process the launcher started to end", 60)
    port = int(killed.url.rsplit(":", 1)[1])
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
    again = launch(tmp_path / "data")  # nothing left holds the port, the data dir or Milvus Lite's lock
    try:
        assert manage(again, "collections").strip() == "No gurus yet."
    finally:
        stop(again)


def test_a_data_dir_that_cannot_be_made_is_said_in_a_sentence(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    result = subprocess.run([sys.executable, "-m", "backend.launcher", "--port", str(free_port()),
                             "--data-dir", str(tmp_path / "a-file" / "data")], cwd=REPO,
                            env=environment(tmp_path / "unused"), capture_output=True, text=True, timeout=120)
    said = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in said, said
    assert f"Cannot use {tmp_path / 'a-file' / 'data'} as the data dir: Not a directory." in said


def test_ctrl_c_while_it_starts_stops_what_was_started_without_a_traceback(tmp_path: Path) -> None:
    data_dir, out = tmp_path / "data", tmp_path / "launcher.out"
    with out.open("w") as sink:  # a new data dir: `prepare` migrates it, so the start is well under way for a while
        launcher = subprocess.Popen([sys.executable, "-m", "backend.launcher", "--port", str(free_port())], cwd=REPO,
                                    env=environment(data_dir), stdout=sink, stderr=subprocess.STDOUT)
    try:
        eventually(lambda: "sidecar milvus-lite ready" in out.read_text(), "the sidecar to start", 120)
        started = [pid for pid in descendants(launcher.pid) if pid != launcher.pid]
    finally:
        launcher.send_signal(signal.SIGINT)
        code = launcher.wait(timeout=120)
    said = out.read_text()
    assert code == 130 and "Traceback" not in said and "stopped before everything was running" in said, said
    assert "OpenGuru is running" not in said and not (data_dir / "run.env").exists()
    eventually(lambda: not any(running(pid) for pid in started), "what it had started to end", 60)


def test_stops_cleanly_on_ctrl_c(product: Product) -> None:
    port = int(product.url.rsplit(":", 1)[1])
    product.process.send_signal(signal.SIGINT)
    assert product.process.wait(timeout=60) == 0
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
    assert not (product.data_dir / "run.env").exists()
    # Warnings on every connection bury the lines that matter (issue #14).
    for log in (product.data_dir / "logs").glob("*.log"):
        text = log.read_text(errors="replace")
        assert "No hostname was supplied" not in text and "too_many_pings" not in text, log.name


def test_manage_after_an_unclean_stop_does_not_follow_a_dead_sidecar(product: Product) -> None:
    """A launcher killed outright leaves run.env naming its sidecar; `./openguru manage` then opens the data dir
    itself (and says why) instead of failing on every call to a port nobody listens on."""
    if product.process.poll() is None:
        product.process.send_signal(signal.SIGINT)
        product.process.wait(timeout=60)
    run_env = product.data_dir / "run.env"
    run_env.write_text(f"MILVUS_URI=http://127.0.0.1:{free_port()}\n")
    result = subprocess.run([str(REPO / "openguru"), "manage", "collections"], cwd=REPO,
                            env=environment(product.data_dir), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "not running" in result.stderr and "not reachable" not in result.stdout + result.stderr
    assert not run_env.exists()
