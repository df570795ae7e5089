"""The class store (classroom/): both backends under the same tests. SQLite runs in the fast loop; PostgreSQL (a
throwaway cluster on 127.0.0.1, started once per test session) is marked slow. Expected counts are tallied here from
the answers given, never read back from the store's own arithmetic."""

from __future__ import annotations

import multiprocessing
import random
import sqlite3
import threading
from collections import Counter

import pytest

import classroom.store as store_module
from classroom import ClassroomError, setting_id
from classroom.codes import CODE_ALPHABET, CODE_LENGTH, LIFETIME_S, key_hash, new_student
from classroom.postgres_store import PostgresStore
from classroom.sqlite_store import SqliteStore

LESSON, QUESTION, N = "qkv", "qkv_predict", 4
SETTING = setting_id({})


class Clock:
    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="session")
def pg_cluster():
    from classroom.local_postgres import throwaway_cluster

    with throwaway_cluster() as cluster:
        yield cluster


def make_store(backend: str, where: str, clock=None):
    kwargs = {"clock": clock} if clock else {}
    return SqliteStore(where, **kwargs) if backend == "sqlite" else PostgresStore(where, **kwargs)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def backend(request, tmp_path):
    """-> (backend name, its path or URL); each PostgreSQL test gets a database of its own."""
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "classes.sqlite3")
    cluster = request.getfixturevalue("pg_cluster")
    import psycopg

    name = f"t{random.getrandbits(48):x}"
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return "postgres", cluster.url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(backend, clock):
    s = make_store(*backend, clock=clock)
    yield s
    s.close()


def test_a_class_has_a_short_code_and_a_long_key_of_which_only_the_hash_is_kept(store, backend):
    code, key = store.create_class()
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert not set(code) & set("IO01B8S5Z2")
    assert len(key) >= 22  # 128 bits of URL-safe base64
    assert store.is_teacher(code, key) and not store.is_teacher(code, key[:-1] + ("A" if key[-1] != "A" else "B"))
    with store._transaction() as run:
        stored = run("SELECT code, key_hash FROM classes", ())
    assert stored == [(code, key_hash(key))] and key not in repr(stored)
    assert store.check_class(code.lower()) == store.check_class(f" {code[:3]}-{code[3:]} ")


def test_one_answer_per_seat_question_and_setting_a_change_replaces_it(store):
    code, key = store.create_class()
    rng = random.Random(0)
    seats = [new_student() for _ in range(30)]
    final = {}
    for _ in range(120):  # seats answer and change their minds
        seat, choice = rng.choice(seats), rng.randint(1, N)
        store.answer(code, seat, LESSON, QUESTION, SETTING, N, choice)
        final[seat] = choice
    other = setting_id({"h": 2})
    store.answer(code, seats[0], LESSON, QUESTION, other, N, 1)
    tally = Counter(final.values())
    counts = store.counts(code, key, LESSON, QUESTION, SETTING, N)
    assert counts.first == tuple(tally[i] for i in range(1, N + 1))
    assert counts.second == (0,) * N and counts.other_settings == 1
    assert store.counts(code, key, LESSON, QUESTION, other, N).first == (1, 0, 0, 0)
    assert store.my_answers(code, seats[0], LESSON, QUESTION, SETTING) == {1: final[seats[0]]}


def test_the_revote_is_kept_apart_and_each_vote_closes_in_turn(store):
    code, key = store.create_class()
    a, b = new_student(), new_student()
    store.answer(code, a, LESSON, QUESTION, SETTING, N, 1)
    store.answer(code, b, LESSON, QUESTION, SETTING, N, 2)
    with pytest.raises(ClassroomError) as err:
        store.answer(code, a, LESSON, QUESTION, SETTING, N, 3, vote=2)
    assert err.value.reason == "closed"
    assert store.spread(code, LESSON, QUESTION, SETTING, N) is None  # not shown yet
    assert store.act(code, key, LESSON, QUESTION, "show").shown
    assert store.spread(code, LESSON, QUESTION, SETTING, N).first == (1, 1, 0, 0)
    assert store.act(code, key, LESSON, QUESTION, "revote").vote == 2
    with pytest.raises(ClassroomError):
        store.answer(code, a, LESSON, QUESTION, SETTING, N, 4, vote=1)  # the first vote is over
    store.answer(code, a, LESSON, QUESTION, SETTING, N, 2, vote=2)
    store.answer(code, b, LESSON, QUESTION, SETTING, N, 2, vote=2)
    counts = store.counts(code, key, LESSON, QUESTION, SETTING, N)
    assert (counts.first, counts.second) == ((1, 1, 0, 0), (0, 2, 0, 0))
    assert store.act(code, key, LESSON, QUESTION, "reveal").revealed
    with pytest.raises(ClassroomError):
        store.answer(code, b, LESSON, QUESTION, SETTING, N, 3, vote=2)
    rows = [(r.option, r.first, r.second) for r in store.export(code, key)]
    assert rows == [(1, 1, 0), (2, 1, 2), (3, 0, 0), (4, 0, 0)]


def test_without_the_key_nobody_counts_acts_or_exports(store):
    code, key = store.create_class()
    other_code, other_key = store.create_class()
    for wrong in (None, "", other_key, key.upper(), key + "x", "<script>"):
        for call in (lambda: store.counts(code, wrong, LESSON, QUESTION, SETTING, N),
                     lambda: store.act(code, wrong, LESSON, QUESTION, "reveal"),
                     lambda: store.export(code, wrong)):
            with pytest.raises(ClassroomError) as err:
                call()
            assert err.value.reason == "forbidden"
    assert store.state(code, LESSON, QUESTION).revealed is False


def test_a_class_expires_after_twelve_hours_and_is_purged(store, clock):
    code, key = store.create_class()
    store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1)
    clock.now += LIFETIME_S - 1
    assert store.counts(code, key, LESSON, QUESTION, SETTING, N).first == (1, 0, 0, 0)
    clock.now += 1
    for call in (lambda: store.check_class(code), lambda: store.export(code, key),
                 lambda: store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1)):
        with pytest.raises(ClassroomError) as err:
            call()
        assert err.value.reason == "expired"
    store.create_class()  # a new class purges the old one
    with store._transaction() as run:
        assert run("SELECT COUNT(*) FROM answers", ())[0][0] == 0
    with pytest.raises(ClassroomError) as err:
        store.check_class(code)
    assert err.value.reason == "unknown"


def test_the_answers_outlive_a_reopened_store(store, backend, clock):
    code, key = store.create_class()
    seats = [new_student() for _ in range(5)]
    for i, seat in enumerate(seats):
        store.answer(code, seat, LESSON, QUESTION, SETTING, N, i % N + 1)
    store.close()
    again = make_store(*backend, clock=clock)
    assert again.counts(code, key, LESSON, QUESTION, SETTING, N).first == (2, 1, 1, 1)
    again.close()


BAD_CODES = ["", " ", "x" * 10_000, "ABC", "ABCDEFG", "ABCDE0", "😀😀😀😀😀😀", "<b>AC</b>", "あいうえおか", None, 123456]
BAD_SEATS = ["", "short", "x" * 10_000, "a" * 15 + "!", "<script>alert(1)</script>", "😀" * 16, "あ" * 16, None, 7]
BAD_CHOICES = [0, 5, -1, True, "2", 2.0, None, 10 ** 20]
BAD_NAMES = ["", "Qkv", "qkv predict", "x" * 65, "<b>", "質問", None]


@pytest.mark.parametrize("bad", BAD_CODES, ids=repr)
def test_a_bad_code_is_refused_with_a_reason(store, bad):
    with pytest.raises(ClassroomError) as err:
        store.answer(bad, new_student(), LESSON, QUESTION, SETTING, N, 1)
    assert err.value.reason == "bad_input"


def test_bad_seats_choices_and_names_are_refused_and_count_nothing(store):
    code, key = store.create_class()
    calls = [lambda s=s: store.answer(code, s, LESSON, QUESTION, SETTING, N, 1) for s in BAD_SEATS]
    calls += [lambda c=c: store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, c) for c in BAD_CHOICES]
    calls += [lambda q=q: store.answer(code, new_student(), LESSON, q, SETTING, N, 1) for q in BAD_NAMES]
    calls += [lambda: store.answer(code, new_student(), LESSON, QUESTION, "zz", N, 1),
              lambda: store.answer(code, new_student(), LESSON, QUESTION, SETTING, 1, 1),
              lambda: store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1, vote=3),
              lambda: store.act(code, key, LESSON, QUESTION, "drop table")]
    for call in calls:
        with pytest.raises(ClassroomError) as err:
            call()
        assert err.value.reason == "bad_input"
    with pytest.raises(ClassroomError) as err:
        store.answer("ACDEFG" if code != "ACDEFG" else "ACDEFH", new_student(), LESSON, QUESTION, SETTING, N, 1)
    assert err.value.reason == "unknown"
    assert store.export(code, key) == []


def test_a_flood_from_one_seat_is_limited_and_counts_nothing_more(store, clock):
    code, key = store.create_class()
    seat = new_student()
    for i in range(store_module.FLOOD_WRITES):
        store.answer(code, seat, LESSON, QUESTION, SETTING, N, i % N + 1)
    with pytest.raises(ClassroomError) as err:
        store.answer(code, seat, LESSON, QUESTION, SETTING, N, 1)
    assert err.value.reason == "flood"
    last = (store_module.FLOOD_WRITES - 1) % N + 1
    assert store.my_answers(code, seat, LESSON, QUESTION, SETTING) == {1: last}
    store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1)  # another seat is not held up
    clock.now += store_module.FLOOD_WINDOW_S + 1
    store.answer(code, seat, LESSON, QUESTION, SETTING, N, 1)
    assert store.counts(code, key, LESSON, QUESTION, SETTING, N).first == (2, 0, 0, 0)


def test_a_class_has_a_maximum_of_seats(store, monkeypatch):
    monkeypatch.setattr(store_module, "MAX_SEATS", 3)
    code, key = store.create_class()
    for _ in range(3):
        store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1)
    with pytest.raises(ClassroomError) as err:
        store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1)
    assert err.value.reason == "full"
    assert store.counts(code, key, LESSON, QUESTION, SETTING, N).first == (3, 0, 0, 0)


def test_concurrent_writers_in_threads_are_all_counted(store, backend, clock):
    code, key = store.create_class()
    rng = random.Random(1)
    work = [[(new_student(), rng.randint(1, N)) for _ in range(10)] for _ in range(12)]

    def write(batch):
        mine = make_store(*backend, clock=clock)
        for seat, choice in batch:
            mine.answer(code, seat, LESSON, QUESTION, SETTING, N, choice)
        mine.close()

    threads = [threading.Thread(target=write, args=(batch,)) for batch in work]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    tally = Counter(choice for batch in work for _, choice in batch)
    assert store.counts(code, key, LESSON, QUESTION, SETTING, N).first == tuple(tally[i] for i in range(1, N + 1))


def _write_in_a_process(backend, where, code, batch):
    mine = make_store(backend, where)
    for seat, choice in batch:
        mine.answer(code, seat, LESSON, QUESTION, SETTING, N, choice)
    mine.close()


def test_concurrent_writers_in_processes_are_all_counted(backend):
    store = make_store(*backend)
    code, key = store.create_class()
    rng = random.Random(2)
    work = [[(new_student(), rng.randint(1, N)) for _ in range(15)] for _ in range(4)]
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_in_a_process, args=(*backend, code, batch)) for batch in work]
    for p in processes:
        p.start()
    for p in processes:
        p.join(120)
    assert [p.exitcode for p in processes] == [0] * len(processes)
    tally = Counter(choice for batch in work for _, choice in batch)
    assert store.counts(code, key, LESSON, QUESTION, SETTING, N).first == tuple(tally[i] for i in range(1, N + 1))
    store.close()


def test_a_missing_sqlite_database_is_unavailable_not_a_traceback(tmp_path):
    (tmp_path / "a_file").write_text("not a folder")
    store = SqliteStore(tmp_path / "a_file" / "classes.sqlite3")
    with pytest.raises(ClassroomError) as err:
        store.create_class()
    assert err.value.reason == "unavailable"
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ClassroomError) as err:
        SqliteStore(broken).create_class()
    assert err.value.reason == "unavailable"
    assert isinstance(err.value.__cause__, sqlite3.Error)


@pytest.mark.slow
def test_an_unreachable_server_is_unavailable_not_a_traceback():
    from classroom.local_postgres import free_port

    store = PostgresStore(f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")
    with pytest.raises(ClassroomError) as err:
        store.create_class()
    assert err.value.reason == "unavailable"


@pytest.mark.slow
def test_answers_outlive_a_server_restart_and_the_store_reconnects():
    from classroom.local_postgres import throwaway_cluster

    with throwaway_cluster() as cluster:
        store = PostgresStore(cluster.url)
        code, key = store.create_class()
        seat = new_student()
        store.answer(code, seat, LESSON, QUESTION, SETTING, N, 3)
        cluster.stop()
        with pytest.raises(ClassroomError) as err:
            store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1)
        assert err.value.reason == "unavailable"
        cluster.start()
        store.answer(code, new_student(), LESSON, QUESTION, SETTING, N, 1)
        assert store.counts(code, key, LESSON, QUESTION, SETTING, N).first == (1, 0, 1, 0)
        store.close()
