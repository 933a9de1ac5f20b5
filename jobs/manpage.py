#!/usr/bin/env python3
"""Writes the man page rankings(1), or one of the installed documentation pages.

Public behaviour is documented once, in the pages under docs/; the man page is
the same text in roff, so an option documented there reaches the page with no
second edit, and the package installs the same pages in /usr/share/doc/rankings/.
Both are read on a machine that has only the package, so whatever is about the
source tree sits between "<!-- source-only -->" and "<!-- /source-only -->"
lines, which both leave out; a page that still names the source tree
(FORBIDDEN) or links outside the installed pages is an error.

    jobs/manpage.py [--version V] [--date YYYY-MM-DD] ROOT > rankings.1
    jobs/manpage.py --markdown PAGE.md > PAGE.md    the page without its source-only parts
    jobs/manpage.py --pages ROOT                    the pages to install, one path a line

The man page: NAME; SYNOPSIS, the first code block under the front page's
(ROOT/README.md) "Commands"; DESCRIPTION, the front page's first paragraph;
then every page of PAGES that exists, in that order, its title a section and
its headings subsections; "Exit status" is EXIT STATUS, and the tables under
every FILES_HEADING (the operator's guide's, then the other pages'), one after
the other, are FILES: each page lists what its part of the package installs.
`man` shows the page 80 columns wide and cannot fill code, so a code line that
would pass column 80 is wrapped here (see wrap_code). Only the Markdown the pages use is understood:
headings, paragraphs, fenced code, pipe tables, "-" lists one level deep
(and one nested level), `code`, **strong** (code inside it included),
*emphasis* and [links](target). A page or heading the man page needs that is
missing is an error, so a renamed section cannot silently empty the page.
"""

import os
import re
import sys

# rankings-night(1) is a link to this page: named here, `whatis rankings-night` finds it.
NAME = "rankings, rankings\\-night \\- turn the jokes app's rating-event exports into its leaderboard document, and run the night around it"
# In order; False: a page another part of the project writes, included when it exists.
PAGES = [
    ("aggregate.md", True),
    ("check.md", True),
    ("migrate.md", True),
    ("input-rules.md", True),
    ("input-formats.md", False),
    ("document.md", True),
    ("exit-status.md", True),
    ("operators-guide.md", True),
    ("configuration.md", False),
    ("firestore.md", False),
    ("managed-exports.md", False),
    ("third-party-exports.md", False),
    ("performance.md", False),
]
RENAMED = {"Exit status": "EXIT STATUS"}
SYNOPSIS_HEADING = "Commands"
FILES_HEADING = "What the package installs"
SEE_ALSO = ("systemctl(1), journalctl(1), systemd.service(5), systemd.timer(5), systemd.exec(5), cron(8), "
            "crontab(5), systemd\\-sysusers(8)")
SOURCE_ONLY, END_SOURCE_ONLY = "<!-- source-only -->", "<!-- /source-only -->"
# What a reader of the installed package does not have.
FORBIDDEN = ["BENCHMARKS.md", "sample-data/", "Tests/", "jobs/", "bench/", "/usr/local", "README.md", ".build", "swift test"]


def without_source_only(text, name):
    """The page without its source-only blocks; an unbalanced marker is an error."""
    out, inside = [], False
    for number, line in enumerate(text.split("\n"), 1):
        marker = line.strip()
        if marker == SOURCE_ONLY:
            if inside:
                sys.exit(f"manpage.py: {name}:{number}: {SOURCE_ONLY} inside another")
            inside = True
        elif marker == END_SOURCE_ONLY:
            if not inside:
                sys.exit(f"manpage.py: {name}:{number}: {END_SOURCE_ONLY} without its start")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        sys.exit(f"manpage.py: {name}: {SOURCE_ONLY} is never closed")
    return "\n".join(out)


def check_installable(text, name):
    """Refuses a page that would send an installed reader to the source tree."""
    installed = {page for page, _ in PAGES}
    for number, line in enumerate(text.split("\n"), 1):
        for word in FORBIDDEN:
            if word in line:
                sys.exit(f"manpage.py: {name}:{number}: names {word!r}, which the package does not "
                         f"install; put it between {SOURCE_ONLY} and {END_SOURCE_ONLY}")
        for target in re.findall(r"\]\(([^)]*)\)", line):
            page = target.split("#")[0]
            if page and not target.startswith(("http://", "https://")) and page not in installed:
                sys.exit(f"manpage.py: {name}:{number}: links to {target}, which is not an installed page")


def installable_page(path):
    with open(path, encoding="utf-8") as page:
        text = without_source_only(page.read(), path)
    check_installable(text, path)
    return text


def escape(text):
    """Escapes roff's special characters; non-ASCII becomes \\[uXXXX] so the page needs no encoding."""
    out = []
    for ch in text.replace("\\", "\\e"):
        if ord(ch) > 127:
            out.append("\\[u%04X]" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


def literal(text):
    """Escapes text meant to be typed: a hyphen stays the ASCII minus a shell needs."""
    return escape(text).replace("-", "\\-")


def inline(text):
    """Converts one paragraph's inline Markdown to roff fonts.

    Code is bold; **strong** is bold too and may hold code (`**`--dedupe id`**`), so a code
    span inside it returns to bold rather than to roman, and no `**` is left in the page.
    """
    pieces = re.split(r"(`[^`]*`)", text)
    plain = [piece for piece in pieces if not (len(piece) >= 2 and piece.startswith("`") and piece.endswith("`"))]
    if sum(piece.count("**") for piece in plain) % 2:
        sys.exit(f"manpage.py: unbalanced ** in: {text[:60]}")
    out = []
    strong = False
    for piece in pieces:
        if len(piece) >= 2 and piece.startswith("`") and piece.endswith("`"):
            code = literal(piece[1:-1])
            # A long path or URL cannot be hyphenated; \: lets roff break it after a slash
            # (and prints nothing), so the line can still be filled.
            if len(piece) > 40:
                code = code.replace("/", "/\\:")
            out.append("\\fB" + code + ("" if strong else "\\fR"))
            continue
        piece = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", piece)
        piece = escape(piece)
        parts = piece.split("**")
        for index, part in enumerate(parts):
            if index > 0:
                strong = not strong
                out.append("\\fB" if strong else "\\fR")
            # A function, not a template: "\\f" in a template would be a form feed.
            back = "\\fB" if strong else "\\fR"
            part = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", lambda m: "\\fI" + m.group(1) + back, part)
            out.append(part)
    return "".join(out)


def text_lines(text):
    """One roff text line per source line, none starting with a control character."""
    lines = []
    for line in inline(text).split("\n"):
        line = line.strip()
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return lines


def split_sections(markdown):
    """[(level, title, body lines)] for every heading; text before the first heading is level 0."""
    sections = [(0, "", [])]
    fenced = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"^(#{1,4}) (.*)$", line)
        if match:
            sections.append((len(match.group(1)), match.group(2).strip(), []))
        else:
            sections[-1][2].append(line)
    return sections


def table_rows(lines):
    rows = []
    for line in lines:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", cell) for cell in cells):
            continue
        rows.append(cells)
    return rows


def render_table(lines):
    header, *rows = table_rows(lines)
    out = []
    for row in rows:
        out += [".TP", *text_lines(row[0])]
        rest = row[1:]
        if len(rest) == 1:
            out += text_lines(rest[0])
        else:
            described = [f"{name}: {cell}" if name else cell for name, cell in zip(header[1:], rest)]
            out += text_lines("; ".join(described))
    return out


# `man` at 80 columns indents a section's text by 7 and a code block by 2 more (.RS 2).
PAGE_WIDTH = 80
TEXT_INDENT = 7
CODE_INDENT = 2


def wrap_code(line, width, shell):
    """A code line cut at spaces into lines of at most `width` characters.

    A shell command goes on after ` \\`, so what is shown is still what is typed; other text
    (output, JSON, tables of options) goes on indented under its own text, after the gap of two
    spaces or more that starts an aligned column when there is one. A word longer than the
    line is cut where it must be.
    """
    if len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    column = re.search(r"\S {2,}(?=\S)", line[indent:])
    hanging = indent + column.end() if column and indent + column.end() < width // 2 else indent + 4
    if shell and not line.lstrip().startswith("#"):
        hanging = indent + 4
    out, rest, first_line = [], line, True
    while True:
        room = width - (2 if shell else 0)
        if len(rest) <= width:
            out.append(rest)
            return out
        cut = rest.rfind(" ", (hanging if not first_line else indent) + 1, room + 1)
        if cut <= 0:
            cut = room
        head, rest = rest[:cut].rstrip(" "), rest[cut:].lstrip(" ")
        out.append(head + (" \\" if shell else ""))
        rest = " " * hanging + rest
        first_line = False


def render_body(lines):
    """Converts a section's body (no headings) to roff."""
    out = []
    i = 0
    nested = False

    def close_nesting():
        nonlocal nested
        if nested:
            out.append(".RE")
            nested = False

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("<!--"):
            i += 1
            continue
        if stripped.startswith("```"):
            close_nesting()
            shell = stripped[3:].strip() in ("sh", "bash", "console")
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            i += 1
            out += [".PP", f".RS {CODE_INDENT}", ".nf"]
            # A nested list's code sits deeper; its own indentation is counted in each line.
            width = PAGE_WIDTH - TEXT_INDENT - CODE_INDENT - (2 if nested else 0)
            out += ["\\&" + literal(piece) for code in block for piece in wrap_code(code.rstrip(), width, shell)]
            out += [".fi", ".RE"]
            continue
        if stripped.startswith("|"):
            close_nesting()
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            out += render_table(block)
            out.append(".PP")
            continue
        bullet = re.match(r"^( *)- (.*)$", line)
        if bullet:
            indent = len(bullet.group(1))
            item = [bullet.group(2)]
            i += 1
            # Continuation lines are indented deeper than the dash and are not a new item.
            while i < len(lines) and lines[i].strip() and not re.match(r"^ *- ", lines[i]) \
                    and not lines[i].strip().startswith(("```", "|")) \
                    and len(lines[i]) - len(lines[i].lstrip()) > indent:
                item.append(lines[i].strip())
                i += 1
            if indent > 0 and not nested:
                out.append(".RS 2")
                nested = True
            elif indent == 0:
                close_nesting()
            out += [".IP \\(bu 2", *text_lines("\n".join(item))]
            continue
        close_nesting()
        paragraph = []
        while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(("```", "|", "<!--")) \
                and not re.match(r"^ *- ", lines[i]):
            paragraph.append(lines[i].strip())
            i += 1
        out += [".PP", *text_lines("\n".join(paragraph))]
    close_nesting()
    return out


def first(predicate, lines, what):
    for index, line in enumerate(lines):
        if predicate(line):
            return index
    sys.exit(f"manpage.py: README.md has no {what}")


def existing_pages(root):
    pages = []
    for page, required in PAGES:
        path = os.path.join(root, "docs", page)
        if os.path.exists(path):
            pages.append(path)
        elif required:
            sys.exit(f"manpage.py: {path} is missing")
    return pages


def man_page(root, version, date):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as readme:
        front = split_sections(without_source_only(readme.read(), "README.md"))
    by_title = {title: body for _, title, body in front}
    if SYNOPSIS_HEADING not in by_title:
        sys.exit(f'manpage.py: README.md has no "{SYNOPSIS_HEADING}" section')
    commands = by_title[SYNOPSIS_HEADING]
    start = first(lambda l: l.startswith("```"), commands, "code block under Commands") + 1
    end = start + first(lambda l: l.startswith("```"), commands[start:], "end of the Commands code block")
    synopsis = commands[start:end]

    intro = next((body for level, _, body in front if level == 1), front[0][2])
    fences = [index for index, line in enumerate(intro) if line.startswith("```")]
    after_code = fences[1] + 1 if len(fences) >= 2 else 0
    paragraph_start = first(lambda l: l.strip(), intro[after_code:], "first paragraph") + after_code
    description = []
    for line in intro[paragraph_start:]:
        if not line.strip():
            break
        description.append(line)
    check_installable("\n".join(description), "README.md (its first paragraph)")

    page = [
        f'.TH RANKINGS 1 "{escape(date)}" "rankings {escape(version)}" "User Commands"',
        ".SH NAME", NAME,
        ".SH SYNOPSIS", ".nf",
        *["\\&" + literal(piece) for line in synopsis for piece in wrap_code(line, PAGE_WIDTH - TEXT_INDENT, False)],
        ".fi",
        ".SH DESCRIPTION", *render_body(description),
    ]
    files = []
    for path in existing_pages(root):
        sections = split_sections(installable_page(path))
        skipping_level = None
        for level, title, body in sections:
            if skipping_level is not None and level > skipping_level:
                continue
            skipping_level = None
            if title == FILES_HEADING:
                files.append(body)
                skipping_level = level
                continue
            if level == 0:
                if any(line.strip() for line in body):
                    sys.exit(f"manpage.py: {path} has text before its title")
                continue
            if level == 1:
                heading = RENAMED.get(title, title).replace("`", "").upper()
                page.append(".SH " + escape(heading))
            else:
                page.append(".SS " + inline(title))
            page += render_body(body)
    if not files:
        sys.exit(f'manpage.py: no page has a "{FILES_HEADING}" section')
    # One list: the tables' rows, without the later tables' header rows.
    rows = [line for line in files[0] if line.strip().startswith("|")]
    for body in files[1:]:
        rows += [line for line in body if line.strip().startswith("|")][2:]
    page += [".SH FILES", *render_body(rows)]
    page += [".SH SEE ALSO", SEE_ALSO]

    # A paragraph break right after a heading or before another break is noise to formatters.
    tidy = []
    for index, line in enumerate(page):
        following = page[index + 1] if index + 1 < len(page) else ".SH"
        if line == ".PP" and (tidy[-1].startswith((".SH", ".SS", ".PP")) or following.startswith((".SH", ".SS", ".PP"))):
            continue
        tidy.append(line)
    text = "\n".join(tidy) + "\n"
    if "**" in text:
        sys.exit("manpage.py: the page holds a raw ** (bold the formatter did not understand)")
    return text


def main(argv):
    usage = ("usage: manpage.py [--version V] [--date YYYY-MM-DD] ROOT\n"
             "       manpage.py --markdown PAGE.md\n"
             "       manpage.py --pages ROOT")
    if len(argv) == 2 and argv[0] == "--markdown":
        sys.stdout.write(installable_page(argv[1]))
        return
    if len(argv) == 2 and argv[0] == "--pages":
        sys.stdout.write("".join(path + "\n" for path in existing_pages(argv[1])))
        return
    options = {"--version": "", "--date": ""}
    while len(argv) >= 2 and argv[0] in options:
        options[argv[0]], argv = argv[1], argv[2:]
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        sys.exit(usage)
    sys.stdout.write(man_page(argv[0], options["--version"], options["--date"]))


if __name__ == "__main__":
    main(sys.argv[1:])
