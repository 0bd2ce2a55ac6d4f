"""What GitHub checks in a push before it takes it: git's rules for ref names, and fsck of
every object the pack carries (GitHub runs ``receive.fsckObjects``).

``funny_ref(name, deleting)`` is git-receive-pack's test (``refs/`` and
``check_refname_format`` of the rest; a deletion may name one level), plus GitHub's
rule that a ref name is UTF-8. ``fsck_problems(obj)`` is git's ``fsck_object`` in strict
mode, on an object's exact bytes (before dulwich parses them): the messages (``hasDotgit: contains '.git'``) that
make ``git index-pack --strict`` refuse it, in git's order and words (``fsck.c``,
``tree-walk.c``, ``path.c``, ``utf8.c``). Two choices go beyond stock git:
``badFilemode`` (only a warning there) refuses, since the replica's readers know only
git's five modes, and a tree entry whose name is not UTF-8 refuses as ``badPathname``,
since the REST API could not name the file.

Not checked: the contents of ``.gitmodules`` and ``.gitattributes`` blobs, and
connectivity beyond a pushed tip being present.
"""

from __future__ import annotations

import stat

from dulwich.objects import Blob, Commit, Tag, Tree

MAX_TREE_ENTRY_LEN = 4096
_STANDARD_MODES = frozenset({0o100755, 0o100644, 0o120000, 0o040000, 0o160000})
_UNORDERED, _DUPLICATE = -1, -2
_HFS_IGNORED = frozenset({0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                          0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF})
_BAD_REF_BYTES = frozenset(range(0x20)) | frozenset(b" :?[\\^~*\x7f")


# --- ref names ------------------------------------------------------------------------------------


def funny_ref(name: bytes, deleting: bool = False) -> bool:
    """True for a ref a push may not update: git-receive-pack's "funny refname"."""
    if not name.startswith(b"refs/") or not _check_refname(name[5:], one_level=deleting):
        return True
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _check_refname(name: bytes, one_level: bool) -> bool:
    """git's ``check_refname_format`` (no pattern)."""
    if name == b"@":
        return False
    components = name.split(b"/")
    for component in components:
        if not component or component.startswith(b".") or component.endswith(b".lock"):
            return False
        if b".." in component or b"@{" in component or not _BAD_REF_BYTES.isdisjoint(component):
            return False
    return not name.endswith(b".") and (one_level or len(components) >= 2)


# --- objects --------------------------------------------------------------------------------------


def fsck_problems(type_num: int, raw: bytes) -> list[str]:
    """Why git's strict fsck refuses an object of this type and these exact bytes (each
    ``msgId: message``); empty when it does not."""
    if type_num == Tree.type_num:
        return _tree(raw)
    if type_num == Commit.type_num:
        return _commit(raw)
    if type_num == Tag.type_num:
        return _tag(raw)
    if type_num == Blob.type_num:
        return []
    return [f"unknownType: unknown type '{type_num}' (internal fsck error)"]


def _tree(raw: bytes) -> list[str]:
    flags: set[str] = set()
    candidates: list[bytes] = []
    previous: tuple[int, bytes] | None = None
    problems: list[str] = []
    at = 0
    while at < len(raw):
        entry = _tree_entry(raw, at)
        if entry is None:
            problems.append("badTree: cannot be parsed as a tree")
            break
        mode, name, sha, at, zero_padded = entry
        flags |= _name_flags(name, mode)
        if sha == bytes(20):
            flags.add("nullSha1")
        if zero_padded:
            flags.add("zeroPaddedFilemode")
        if mode not in _STANDARD_MODES:
            flags.add("badFilemode")
        if previous is not None:
            order = _verify_ordered(previous[0], previous[1], mode, name, candidates)
            if order == _UNORDERED:
                flags.add("treeNotSorted")
            elif order == _DUPLICATE:
                flags.add("duplicateEntries")
        previous = (mode, name)
    wording = [("nullSha1", "contains entries pointing to null sha1"), ("fullPathname", "contains full pathnames"),
             ("emptyName", "contains empty pathname"), ("hasDot", "contains '.'"),
             ("hasDotdot", "contains '..'"), ("hasDotgit", "contains '.git'"),
             ("zeroPaddedFilemode", "contains zero-padded file modes"),
             ("badFilemode", "contains bad file modes"), ("duplicateEntries", "contains duplicate file entries"),
             ("treeNotSorted", "not properly sorted"), ("largePathname", "contains excessively large pathname"),
             ("gitmodulesSymlink", ".gitmodules is a symbolic link"),
             ("badPathname", "contains a pathname that is not UTF-8")]
    return problems + [f"{key}: {text}" for key, text in wording if key in flags]


def _tree_entry(raw: bytes, at: int) -> tuple[int, bytes, bytes, int, bool] | None:
    """(mode, name, binary sha, where the next entry starts, mode zero-padded), or None
    where git's ``decode_tree_entry`` fails (too short, malformed mode, empty name)."""
    rest = len(raw) - at
    if rest < 23 or raw[len(raw) - 21] != 0:
        return None
    space = raw.find(b" ", at)
    if space <= at:
        return None
    digits = raw[at:space]
    if any(c < 0x30 or c > 0x37 for c in digits):
        return None
    end = raw.find(b"\0", space + 1)
    name = raw[space + 1:end]
    if not name or end + 21 > len(raw):
        return None
    return int(digits, 8), name, raw[end + 1:end + 21], end + 21, digits.startswith(b"0")


def _name_flags(name: bytes, mode: int) -> set[str]:
    flags: set[str] = set()
    if b"/" in name:
        flags.add("fullPathname")
    if name == b".":
        flags.add("hasDot")
    if name == b"..":
        flags.add("hasDotdot")
    if _is_hfs_dot(name, b"git") or _is_ntfs_dotgit(name):
        flags.add("hasDotgit")
    if len(name) > MAX_TREE_ENTRY_LEN:
        flags.add("largePathname")
    link = stat.S_ISLNK(mode)
    if link and (_is_hfs_dot(name, b"gitmodules") or _is_ntfs_dot(name, b"gitmodules", b"gi7eba")):
        flags.add("gitmodulesSymlink")
    at = name.find(b"\\")
    while at != -1:
        after = name[at + 1:]
        if _is_ntfs_dotgit(after):
            flags.add("hasDotgit")
        if link and _is_ntfs_dot(after, b"gitmodules", b"gi7eba"):
            flags.add("gitmodulesSymlink")
        at = name.find(b"\\", at + 1)
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        flags.add("badPathname")
    return flags


def _lt_slash(c: int) -> bool:
    return 0 < c < 0x2F


def _verify_ordered(mode1: int, name1: bytes, mode2: int, name2: bytes, candidates: list[bytes]) -> int:
    """git's ``verify_ordered``: 0, ``_UNORDERED`` or ``_DUPLICATE`` (a file and a folder of
    one name count, however far apart the path order puts them)."""
    n = min(len(name1), len(name2))
    if name1[:n] != name2[:n]:
        return 0 if name1[:n] < name2[:n] else _UNORDERED
    c1 = name1[n] if n < len(name1) else 0
    c2 = name2[n] if n < len(name2) else 0
    if not c1 and not c2:
        return _DUPLICATE
    if not c1 and stat.S_ISDIR(mode1):
        c1 = 0x2F
    if not c2 and stat.S_ISDIR(mode2):
        c2 = 0x2F
    if not c1 and _lt_slash(c2):
        candidates.append(name1)
    elif c2 == 0x2F and _lt_slash(c1):
        while candidates:
            file_name = candidates.pop()
            if not name2.startswith(file_name):
                continue
            after = name2[len(file_name):]
            if not after:
                return _DUPLICATE
            if _lt_slash(after[0]):
                candidates.append(file_name)
                break
    return 0 if c1 < c2 else _UNORDERED


def _utf8_char(data: bytes, at: int) -> tuple[int, int] | None:
    """git's ``pick_one_utf8_char``: (code point, length), None when invalid (it also refuses
    U+FFFE and U+FFFF); (0, 1) at the end."""
    if at >= len(data):
        return 0, 1
    s = data[at:at + 4] + b"\0\0\0"
    c0 = s[0]
    if c0 < 0x80:
        return c0, 1
    if c0 & 0xE0 == 0xC0:
        if s[1] & 0xC0 != 0x80 or c0 & 0xFE == 0xC0:
            return None
        return ((c0 & 0x1F) << 6) | (s[1] & 0x3F), 2
    if c0 & 0xF0 == 0xE0:
        if (s[1] & 0xC0 != 0x80 or s[2] & 0xC0 != 0x80 or (c0 == 0xE0 and s[1] & 0xE0 == 0x80)
                or (c0 == 0xED and s[1] & 0xE0 == 0xA0) or (c0 == 0xEF and s[1] == 0xBF and s[2] & 0xFE == 0xBE)):
            return None
        return ((c0 & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F), 3
    if c0 & 0xF8 == 0xF0:
        if (s[1] & 0xC0 != 0x80 or s[2] & 0xC0 != 0x80 or s[3] & 0xC0 != 0x80
                or (c0 == 0xF0 and s[1] & 0xF0 == 0x80) or (c0 == 0xF4 and s[1] > 0x8F) or c0 > 0xF4):
            return None
        return ((c0 & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F), 4
    return None


def _is_hfs_dot(name: bytes, needle: bytes) -> bool:
    """git's ``is_hfs_dot_generic``: ``.`` + needle, case-insensitive, ignoring the code
    points HFS+ ignores; an invalid sequence reads as the end of the name."""
    at = 0

    def next_char() -> int:
        nonlocal at
        while True:
            found = _utf8_char(name, at)
            if found is None:
                at = len(name) + 1
                return 0
            char, size = found
            at += size
            if char not in _HFS_IGNORED:
                return char

    if next_char() != 0x2E:
        return False
    for wanted in needle:
        char = next_char()
        if char > 127 or chr(char).lower() != chr(wanted):
            return False
    char = next_char()
    return not char or char == 0x2F


def _byte(name: bytes, at: int) -> int:
    return name[at] if at < len(name) else 0


def _is_ntfs_dotgit(name: bytes) -> bool:
    """git's ``is_ntfs_dotgit``: ``.git`` or ``git~1``, any case, then only spaces and dots
    (or a ``:`` stream, or a separator)."""
    lower = name[:5].lower()
    if lower[:4] == b".git":
        at = 4
    elif lower == b"git~1":
        at = 5
    else:
        return False
    while True:
        c = _byte(name, at)
        at += 1
        if not c or c in b"/\\:":
            return True
        if c not in b". ":
            return False


def _is_ntfs_dot(name: bytes, dotgit_name: bytes, shortname: bytes) -> bool:
    """git's ``is_ntfs_dot_generic``: ``.NAME``, its NTFS short name ``NAME[:6]~1..4``, or
    the hashed fall-back short name, each then only spaces and dots (or a stream)."""
    size = len(dotgit_name)
    if name[:1] == b"." and name[1:1 + size].lower() == dotgit_name:
        return _only_spaces_and_periods(name, size + 1)
    if name[:6].lower() == dotgit_name[:6] and _byte(name, 6) == 0x7E and 0x31 <= _byte(name, 7) <= 0x34:
        return _only_spaces_and_periods(name, 8)
    i, saw_tilde = 0, False
    while i < 8:
        c = _byte(name, i)
        if not c:
            return False
        if saw_tilde:
            if not 0x30 <= c <= 0x39:
                return False
        elif c == 0x7E:
            i += 1
            if not 0x31 <= _byte(name, i) <= 0x39:
                return False
            saw_tilde = True
        elif i >= 6 or c & 0x80 or chr(c).lower().encode() != shortname[i:i + 1]:
            return False
        i += 1
    return _only_spaces_and_periods(name, 8)


def _only_spaces_and_periods(name: bytes, at: int) -> bool:
    while True:
        c = _byte(name, at)
        at += 1
        if not c or c == 0x3A:
            return True
        if c not in b" .":
            return False


def _verify_headers(raw: bytes) -> str | None:
    nul = raw.find(b"\0")
    end = raw.find(b"\n\n")
    if nul != -1 and (end == -1 or nul < end):
        return f"nulInHeader: unterminated header: NUL at offset {nul}"
    if end != -1 or raw.endswith(b"\n"):
        return None
    return "unterminatedHeader: unterminated header"


def _is_hex_sha_line(raw: bytes, at: int) -> bool:
    sha = raw[at:at + 40]
    return len(sha) == 40 and all(c in b"0123456789abcdefABCDEF" for c in sha) and raw[at + 40:at + 41] == b"\n"


def _commit(raw: bytes) -> list[str]:
    problem = _verify_headers(raw)
    if problem is not None:
        return [problem]
    if not raw.startswith(b"tree "):
        return ["missingTree: invalid format - expected 'tree' line"]
    if not _is_hex_sha_line(raw, 5):
        return ["badTreeSha1: invalid 'tree' line format - bad sha1"]
    at = 46
    while raw.startswith(b"parent ", at):
        if not _is_hex_sha_line(raw, at + 7):
            return ["badParentSha1: invalid 'parent' line format - bad sha1"]
        at += 48
    authors = 0
    while raw.startswith(b"author ", at):
        authors += 1
        problem, at = _ident(raw, at + 7)
        if problem is not None:
            return [problem]
    if authors < 1:
        return ["missingAuthor: invalid format - expected 'author' line"]
    if authors > 1:
        return ["multipleAuthors: invalid format - multiple 'author' lines"]
    if not raw.startswith(b"committer ", at):
        return ["missingCommitter: invalid format - expected 'committer' line"]
    problem, at = _ident(raw, at + 10)
    if problem is not None:
        return [problem]
    if b"\0" in raw:
        return ["nulInCommit: NUL byte in the commit object body"]
    return []


def _tag(raw: bytes) -> list[str]:
    problem = _verify_headers(raw)
    if problem is not None:
        return [problem]
    if not raw.startswith(b"object "):
        return ["missingObject: invalid format - expected 'object' line"]
    if not _is_hex_sha_line(raw, 7):
        return ["badObjectSha1: invalid 'object' line format - bad sha1"]
    at = 48
    if not raw.startswith(b"type ", at):
        return ["missingTypeEntry: invalid format - expected 'type' line"]
    eol = raw.find(b"\n", at)
    if eol == -1:
        return ["missingType: invalid format - unexpected end after 'type' line"]
    if raw[at + 5:eol] not in (b"commit", b"tree", b"blob", b"tag"):
        return ["badType: invalid 'type' value"]
    at = eol + 1
    if not raw.startswith(b"tag ", at):
        return ["missingTagEntry: invalid format - expected 'tag' line"]
    eol = raw.find(b"\n", at)
    if eol == -1:
        return ["missingTag: invalid format - unexpected end after 'type' line"]
    at = eol + 1
    if raw.startswith(b"tagger ", at):
        problem, at = _ident(raw, at + 7)
        if problem is not None:
            return [problem]
    return []


def _ident(raw: bytes, at: int) -> tuple[str | None, int]:
    """git's ``fsck_ident`` on the line from ``at``: (problem or None, start of the next line)."""
    nl = raw.find(b"\n", at)
    nl = len(raw) if nl == -1 else nl
    nxt = nl + 1
    line = raw[at:nl] + b"\n"
    prefix = "invalid author/committer line - "
    if line.startswith(b"<"):
        return "missingNameBeforeEmail: " + prefix + "missing space before email", nxt
    lt = 0
    while True:
        c = line[lt]
        if c == 0x0A:
            return "missingEmail: " + prefix + "missing email", nxt
        if c == 0x3E:
            return "badName: " + prefix + "bad name", nxt
        if c == 0x3C:
            break
        lt += 1
    if line[lt - 1] != 0x20:
        return "missingSpaceBeforeEmail: " + prefix + "missing space before email", nxt
    p = lt + 1
    while True:
        c = line[p]
        if c in (0x3C, 0x0A):
            return "badEmail: " + prefix + "bad email", nxt
        if c == 0x3E:
            break
        p += 1
    p += 1
    if line[p] != 0x20:
        return "missingSpaceBeforeDate: " + prefix + "missing space before date", nxt
    p += 1
    while line[p] in (0x20, 0x09):
        p += 1
    if not 0x30 <= line[p] <= 0x39:
        return "badDate: " + prefix + "bad date", nxt
    if line[p] == 0x30 and line[p + 1] != 0x20:
        return "zeroPaddedDate: " + prefix + "zero-padded date", nxt
    start = p
    while 0x30 <= line[p] <= 0x39:
        p += 1
    if p - start > 23 or int(line[start:p]) >= 2 ** 63:
        return "badDateOverflow: " + prefix + "date causes integer overflow", nxt
    if line[p] != 0x20:
        return "badDate: " + prefix + "bad date", nxt
    zone = line[p + 1:p + 7]
    if len(zone) < 6 or zone[0] not in b"+-" or not zone[1:5].isdigit() or zone[5] != 0x0A:
        return "badTimezone: " + prefix + "bad time zone", nxt
    return None, nxt
