"""Join codes, teacher keys and student ids: made with `secrets`, checked before anything reaches a store (pure).

A join code is short and read aloud or off a projector, so it uses letters no one confuses (no I/O/0/1/B/8/S/5/Z/2);
a teacher key is a 192-bit secret and only its SHA-256 hash is stored; a student id is a random 96-bit name of a seat,
never a person's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets

CODE_ALPHABET = "ACDEFGHJKLMNPQRTUVWXY"  # 21 letters, none that reads as a digit or as another letter
CODE_LENGTH = 6  # 21^6 = 86 million codes
KEY_BYTES = 24  # 192 bits (the issue asks for at least 128)
STUDENT_BYTES = 12  # 96 bits: two students never draw the same seat
LIFETIME_S = 12 * 3600  # a class expires 12 hours after it was started
MAX_OPTIONS = 9

_NAME = re.compile(r"[a-z][a-z0-9_.]{0,63}")  # a lesson ("heads") or a question's key ("heads_off_predict")
_STUDENT = re.compile(r"[A-Za-z0-9_-]{16,43}")
_KEY = re.compile(r"[A-Za-z0-9_-]{22,64}")
_SETTING = re.compile(r"[0-9a-f]{16}")


class ClassroomError(Exception):
    """Why a class could not do what was asked; ``reason`` names a message (locales classroom.error_<reason>).

    unknown: no such class; expired: the class is over; bad_input: a malformed code, id, question or option;
    closed: this vote is not open now; flood: too many answers from one seat; full: the class has its maximum of
    seats; forbidden: a wrong teacher key; unavailable: the database cannot be reached.
    """

    REASONS = ("unknown", "expired", "bad_input", "closed", "flood", "full", "forbidden", "unavailable")

    def __init__(self, reason: str, detail: str = ""):
        assert reason in self.REASONS, reason
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def new_code() -> str:
    """A fresh join code: CODE_LENGTH letters of CODE_ALPHABET."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_key() -> str:
    """A fresh teacher key: KEY_BYTES random bytes, URL-safe base64 (32 characters)."""
    return secrets.token_urlsafe(KEY_BYTES)


def new_student() -> str:
    """A fresh anonymous student id (16 URL-safe characters)."""
    return secrets.token_urlsafe(STUDENT_BYTES)


def key_hash(key: str) -> str:
    """SHA-256 of a teacher key, hex: what the store keeps (the key has 192 bits, so no slow hash is needed)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_matches(key: str | None, stored_hash: str) -> bool:
    """True when ``key`` hashes to ``stored_hash`` (compared in constant time)."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        return False
    return hmac.compare_digest(key_hash(key), stored_hash)


def clean_code(text: object) -> str:
    """A join code as typed or linked ("acd-efg", " ACDEFG ") -> "ACDEFG"; ClassroomError('bad_input') if it cannot be one."""
    if not isinstance(text, str) or len(text) > 32:
        raise ClassroomError("bad_input", "code")
    code = re.sub(r"[\s-]", "", text).upper()
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        raise ClassroomError("bad_input", "code")
    return code


def check_student(student: object) -> str:
    """The student id itself when well formed, else ClassroomError('bad_input')."""
    if not isinstance(student, str) or not _STUDENT.fullmatch(student):
        raise ClassroomError("bad_input", "student")
    return student


def check_name(name: object) -> str:
    """A lesson or question key when well formed ([a-z][a-z0-9_.]{0,63}), else ClassroomError('bad_input')."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ClassroomError("bad_input", "name")
    return name


def check_setting(setting: object) -> str:
    """A setting id (from setting_id) when well formed, else ClassroomError('bad_input')."""
    if not isinstance(setting, str) or not _SETTING.fullmatch(setting):
        raise ClassroomError("bad_input", "setting")
    return setting


def check_option(option: object, n_options: object) -> int:
    """``option`` when it is one of 1..n_options (2 <= n_options <= MAX_OPTIONS), else ClassroomError('bad_input')."""
    if type(n_options) is not int or not 2 <= n_options <= MAX_OPTIONS:
        raise ClassroomError("bad_input", "n_options")
    if type(option) is not int or not 1 <= option <= n_options:
        raise ClassroomError("bad_input", "option")
    return option


def setting_id(values: dict) -> str:
    """What a question is about (the values it was asked with) -> a 16-hex-digit id. Only this hash is stored, never the
    values: a learner's own sentence may hold a name."""
    text = json.dumps({str(k): str(v) for k, v in values.items()}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
