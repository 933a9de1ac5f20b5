#!/usr/bin/env python3
"""Writes the man page rankings(1) to stdout, made from README.md.

Public behaviour is documented once, in README.md; the man page is the same
text in roff, so an option added to the README reaches the page with no
second edit. Every `##` section of the README becomes a section of the page,
in README order, except those in SKIPPED (they are about this repository, not
about the installed program). The first code block under "Commands" is the
SYNOPSIS, the README's first paragraph the DESCRIPTION, "Exit status" is EXIT
STATUS, and the table under the heading FILES_HEADING is FILES.

    jobs/manpage.py [--version V] [--date YYYY-MM-DD] README.md > rankings.1

Only the Markdown the README uses is understood: headings, paragraphs,
fenced code, pipe tables, "-" lists one level deep, `code`, **strong**,
*emphasis* and [links](target). A heading the page needs that is missing
is an error, so a renamed section cannot silently empty the page.
"""

import re
import sys

NAME = "rankings \\- turn the jokes app's rating-event exports into its leaderboard document"
SKIPPED = {"Speed and memory", "Where things are", "Build the package and test it"}
RENAMED = {"Exit status": "EXIT STATUS"}
SYNOPSIS_HEADING = "Commands"
FILES_HEADING = "What the package installs"
SEE_ALSO = "systemctl(1), systemd.timer(5), systemd.exec(5), crontab(5), systemd\\-sysusers(8)"


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
    """Converts one paragraph's inline Markdown to roff fonts."""
    pieces = re.split(r"(`[^`]*`)", text)
    out = []
    for piece in pieces:
        if len(piece) >= 2 and piece.startswith("`") and piece.endswith("`"):
            code = literal(piece[1:-1])
            # A long path or URL cannot be hyphenated; \: lets roff break it after a slash
            # (and prints nothing), so the line can still be filled.
            if len(piece) > 40:
                code = code.replace("/", "/\\:")
            out.append("\\fB" + code + "\\fR")
            continue
        piece = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", piece)
        piece = escape(piece)
        piece = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", piece)
        piece = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\fI\1\\fR", piece)
        out.append(piece)
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
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            i += 1
            out += [".PP", ".RS 4", ".nf"]
            out += ["\\&" + literal(code) for code in block]
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


def main(argv):
    options = {"--version": "", "--date": ""}
    while len(argv) >= 2 and argv[0] in options:
        options[argv[0]], argv = argv[1], argv[2:]
    if len(argv) != 1:
        sys.exit("usage: manpage.py [--version V] [--date YYYY-MM-DD] README.md")
    version, date = options["--version"], options["--date"]
    with open(argv[0], encoding="utf-8") as readme:
        sections = split_sections(readme.read())

    by_title = {title: body for _, title, body in sections}
    for needed in (SYNOPSIS_HEADING, FILES_HEADING):
        if needed not in by_title:
            sys.exit(f'manpage.py: README.md has no "{needed}" section')

    commands = by_title[SYNOPSIS_HEADING]
    start = first(lambda l: l.startswith("```"), commands, "code block under Commands") + 1
    end = start + first(lambda l: l.startswith("```"), commands[start:], "end of the Commands code block")
    synopsis = commands[start:end]

    intro = next((body for level, _, body in sections if level == 1), sections[0][2])
    fences = [index for index, line in enumerate(intro) if line.startswith("```")]
    after_code = fences[1] + 1 if len(fences) >= 2 else 0
    paragraph_start = first(lambda l: l.strip(), intro[after_code:], "first paragraph") + after_code
    description = []
    for line in intro[paragraph_start:]:
        if not line.strip():
            break
        description.append(line)

    page = [
        f'.TH RANKINGS 1 "{escape(date)}" "rankings {escape(version)}" "User Commands"',
        ".SH NAME", NAME,
        ".SH SYNOPSIS", ".nf", *["\\&" + literal(line) for line in synopsis], ".fi",
        ".SH DESCRIPTION", *render_body(description),
    ]
    skipping_level = None
    for level, title, body in sections[1:]:
        if skipping_level is not None and level > skipping_level:
            continue
        skipping_level = None
        if title in SKIPPED or title == FILES_HEADING or level <= 1:
            skipping_level = level if title in SKIPPED or title == FILES_HEADING else None
            continue
        heading = RENAMED.get(title, title) if level == 2 else title
        page.append((".SH " if level == 2 else ".SS ") + (escape(heading.upper()) if level == 2 else inline(heading)))
        page += render_body(body)
    page += [".SH FILES", *render_body(by_title[FILES_HEADING])]
    page += [".SH SEE ALSO", SEE_ALSO]

    # A paragraph break right after a heading or before another break is noise to formatters.
    tidy = []
    for index, line in enumerate(page):
        following = page[index + 1] if index + 1 < len(page) else ".SH"
        if line == ".PP" and (tidy[-1].startswith((".SH", ".SS", ".PP")) or following.startswith((".SH", ".SS", ".PP"))):
            continue
        tidy.append(line)
    sys.stdout.write("\n".join(tidy) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
