#!/usr/bin/env python3
"""Checks that what the documentation names exists.

For README.md and docs/*.md (or the files given with --doc), in code spans (`...`) and in the
command lines of fenced code blocks, and in links, every one of these must exist:

  links         [text](target): the target file, relative to the document; a #anchor must be
                a heading of the target (or of the document itself)
  repo paths    `gossip/transport/transport.h`, `configs/fmnist-mlp.toml`, `scripts/faults.sh`:
                a path whose first part is a top-level entry of the repository (brace lists such
                as `error.{h,cpp}` stand for each name); also in fenced command lines
  file names    `d_cliques.h`, `torch_ddp.py`: a bare source, script or config name must be the
                name of some file in the repository
  config keys   `exchange.mode`, `--set optimizer.lr=0.1`, `[security] curve = true`: a key of the
                schema (`starling config --schema --json`)
  commands      `starling SUBCOMMAND --option`: a subcommand of `starling --help` and an option of
                `starling SUBCOMMAND --help`
  make targets  `make demo`: a target of the Makefile

Prose outside code spans is never read as a name, so "make sure" or "the starling train of
thought" cannot fail the check. Exit 0 when everything exists, 1 with one line per missing
name (file:line: what), 2 on a usage error.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

SOURCE_EXTENSIONS = ("h", "hpp", "cpp", "py", "sh", "toml", "yaml", "yml", "cmake")
# Top-level entries that are outputs, not sources: a path into them names what a run writes.
OUTPUT_DIRS = {"build", "build-arm64", "results", ".git"}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
STARLING_CMD = re.compile(r"(?<![\w.-])starling[ \t]+([a-z][a-z0-9-]*)")
STARLING_TOP_OPTION = re.compile(r"(?<![\w./-])starling[ \t]+(--[a-z][a-z0-9-]*)")
MAKE_CMD = re.compile(r"(?<![\w.-])make[ \t]+([A-Za-z][\w-]*)(?![\w.=-])")
LONG_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
SHORT_OPTION = re.compile(r"(?<![\w-])(-[a-zA-Z])(?=\s|$)")
KEY = re.compile(r"^([a-z_]+)\.([a-z_][a-z0-9_]*)$")
SECTION_KEY = re.compile(r"\[([a-z_]+)\]\s+([a-z_][a-z0-9_]*)\s*=")
KEYS_BEGIN = "<!-- config-keys: begin"
KEYS_END = "<!-- config-keys: end"


def run(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return out.returncode, out.stdout


def help_options(text):
    """The options a CLI11 help text defines: `-c,--config TEXT`, `--json`, `-h,--help`."""
    options = set()
    for line in text.splitlines():
        m = re.match(r"^\s+((?:-[a-zA-Z],\s*)?--?[a-zA-Z][\w-]*(?:,\s*--?[a-zA-Z][\w-]*)*)", line)
        if m:
            options.update(o.strip() for o in m.group(1).split(","))
    return options


def listed_subcommands(text):
    """The names under a CLI11 help text's `Subcommands:` heading."""
    names, in_list = [], False
    for line in text.splitlines():
        if re.match(r"^\s*subcommands:\s*$", line, re.I):
            in_list = True
            continue
        if in_list:
            m = re.match(r"^\s+([a-z][a-z0-9-]*)\s", line + " ")
            if m:
                names.append(m.group(1))
            elif line.strip():
                in_list = False
    return names


def command_options(starling, words):
    """The options of `starling WORDS...` and of its own subcommands (`tokenizer train`)."""
    text = run([starling] + words + ["--help"])[1]
    options = help_options(text)
    for name in listed_subcommands(text):
        options |= command_options(starling, words + [name])
    return options


def subcommands(starling):
    rc, text = run([starling, "--help"])
    names = listed_subcommands(text)
    if not names:
        sys.exit("check_docs: no subcommands in `%s --help`:\n%s" % (starling, text))
    return {name: command_options(starling, [name]) for name in names}, help_options(text)


def schema_keys(starling):
    rc, text = run([starling, "config", "--schema", "--json"])
    if rc != 0:
        sys.exit("check_docs: `%s config --schema --json` failed:\n%s" % (starling, text))
    return {row["key"] for row in json.loads(text)}


def make_targets(root):
    targets = set()
    for line in open(os.path.join(root, "Makefile"), encoding="utf-8"):
        m = re.match(r"^([A-Za-z0-9_.%-]+(?:[ \t]+[A-Za-z0-9_.%-]+)*)[ \t]*:(?![:=])", line)
        if m:
            targets.update(t for t in m.group(1).split() if not t.startswith("."))
    return targets


def repo_files(root):
    top, names = set(), set()
    for entry in os.listdir(root):
        if entry not in OUTPUT_DIRS:
            top.add(entry)
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel.split(os.sep)[0] in OUTPUT_DIRS:
            dirnames[:] = []
            continue
        names.update(filenames)
    return top, names


def slug(text):
    """GitHub's anchor for a heading."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, counts, in_fence = set(), {}, False
        for line in open(path, encoding="utf-8"):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            m = None if in_fence else HEADING.match(line)
            if m:
                s = slug(m.group(2))
                n = counts.get(s, 0)
                counts[s] = n + 1
                found.add(s if n == 0 else "%s-%d" % (s, n))
        cache[path] = found
    return cache[path]


def expand_braces(token):
    m = re.search(r"\{([^{}]*)\}", token)
    if not m:
        return [token]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(token[: m.start()] + alt + token[m.end():]))
    return out


class Checker:
    def __init__(self, root, commands, top_options, keys, targets):
        self.root = root
        self.commands, self.top_options = commands, top_options
        self.keys, self.sections = keys, {k.split(".")[0] for k in keys}
        self.targets = targets
        self.top, self.names = repo_files(root)
        self.errors = []
        self.counts = dict(links=0, paths=0, files=0, keys=0, commands=0, targets=0)

    def error(self, doc, line, what):
        self.errors.append("%s:%d: %s" % (os.path.relpath(doc, self.root), line, what))

    # --- the kinds of name -------------------------------------------------------------------
    def check_commands(self, doc, line, text):
        for m in STARLING_TOP_OPTION.finditer(text):
            self.counts["commands"] += 1
            if m.group(1) not in self.top_options:
                self.error(doc, line, "`starling %s`: no such option of starling" % m.group(1))
        for m in STARLING_CMD.finditer(text):
            self.counts["commands"] += 1
            name = m.group(1)
            if name not in self.commands:
                self.error(doc, line, "`starling %s`: no such subcommand" % name)
                continue
            rest = re.split(r"&&|;|\n|(?<![\w-])starling[ \t]", text[m.end():])[0]
            for o in LONG_OPTION.findall(rest) + SHORT_OPTION.findall(rest):
                if o not in self.commands[name]:
                    self.error(doc, line, "`starling %s %s`: no such option" % (name, o))
        for m in MAKE_CMD.finditer(text):
            self.counts["targets"] += 1
            if m.group(1) not in self.targets:
                self.error(doc, line, "`make %s`: no such target in the Makefile" % m.group(1))

    def check_path(self, doc, line, token):
        token = token.strip("'\"()[],;:").rstrip(".")
        if not token or token.startswith(("-", "/", "~", "$")):
            return
        if KEY.match(token.split("=")[0]) and not re.search(r"\.(%s)$" % "|".join(SOURCE_EXTENSIONS), token):
            self.check_key(doc, line, token.split("=")[0])
            return
        if "://" in token:
            return
        if any(c in token for c in "<>*$=|…"):
            return
        if "/" in token:
            if token.split("/")[0] not in self.top:
                return
            for path in expand_braces(token):
                self.counts["paths"] += 1
                if not os.path.exists(os.path.join(self.root, path)):
                    self.error(doc, line, "`%s`: no such file or folder" % path)
            return
        if re.match(r"^[\w+.-]+\.(%s)$" % "|".join(SOURCE_EXTENSIONS), token):
            self.counts["files"] += 1
            if token not in self.names:
                self.error(doc, line, "`%s`: no file of that name in the repository" % token)
            return

    def check_key(self, doc, line, token):
        m = KEY.match(token)
        if m and m.group(1) in self.sections:
            self.counts["keys"] += 1
            if token not in self.keys:
                self.error(doc, line, "`%s`: no such config key in the schema" % token)

    def check_span(self, doc, line, text):
        text = text.replace("\n", " ")
        self.check_commands(doc, line, text)
        for m in SECTION_KEY.finditer(text):
            key = "%s.%s" % (m.group(1), m.group(2))
            if m.group(1) in self.sections:
                self.counts["keys"] += 1
                if key not in self.keys:
                    self.error(doc, line, "`%s`: no such config key in the schema" % key)
        for token in text.split():
            self.check_path(doc, line, token)

    def check_link(self, doc, line, target, in_generated):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            return
        self.counts["links"] += 1
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
        if not os.path.exists(full):
            self.error(doc, line, "link to `%s`: no such file" % target)
            return
        # The generated key table's text is the schema's (cli/config_schema.cpp); its anchors
        # are checked where it is written, not here.
        if anchor and full.endswith(".md") and not in_generated and anchor not in anchors(full):
            self.error(doc, line, "link to `%s`: no heading `#%s` in %s"
                       % (target, anchor, os.path.relpath(full, self.root)))

    # --- a document --------------------------------------------------------------------------
    def check(self, doc):
        lines = open(doc, encoding="utf-8").read().split("\n")
        prose, fence, in_generated = [], None, False
        for number, text in enumerate(lines, 1):
            m = FENCE.match(text)
            if fence is not None:
                if m and m.group(1)[0] == fence[0][0] and len(m.group(1)) >= len(fence[0]):
                    fence = None
                elif fence[1] not in ("toml", "json", "text"):
                    command = re.sub(r"^\s*\$\s+", "", text)
                    self.check_commands(doc, number, command)
                    for token in command.split():
                        if "/" in token:
                            self.check_path(doc, number, token)
                prose.append((number, ""))
                continue
            if m:
                fence = (m.group(1), m.group(2))
                prose.append((number, ""))
                continue
            prose.append((number, text))
        # Code spans may run over a line break: read the prose a paragraph at a time.
        paragraph, generated = [], False
        for number, text in prose + [(len(lines) + 1, "")]:
            if KEYS_BEGIN in text:
                in_generated = True
            if text.strip():
                paragraph.append((number, text))
                generated = generated or in_generated
                if KEYS_END in text:
                    in_generated = False
                continue
            self.check_paragraph(doc, paragraph, generated)
            paragraph, generated = [], False

    def check_paragraph(self, doc, paragraph, in_generated):
        if not paragraph:
            return
        text = "\n".join(t for _, t in paragraph)
        starts = []
        offset = 0
        for number, t in paragraph:
            starts.append((offset, number))
            offset += len(t) + 1

        def line_of(pos):
            return max(n for o, n in starts if o <= pos)

        spans = list(CODE_SPAN.finditer(text))
        for m in spans:
            self.check_span(doc, line_of(m.start()), m.group(2))
        outside = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)
        for m in LINK.finditer(outside):
            self.check_link(doc, line_of(m.start()), m.group(2), in_generated)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starling", required=True, help="the built starling executable")
    parser.add_argument("--root", required=True, help="the repository")
    parser.add_argument("--doc", nargs="+", help="documents to check (default: README.md docs/*.md)")
    args = parser.parse_args()
    root = os.path.realpath(args.root)
    docs = [os.path.realpath(d) for d in args.doc] if args.doc else (
        [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))))
    commands, top_options = subcommands(args.starling)
    checker = Checker(root, commands, top_options, schema_keys(args.starling), make_targets(root))
    for doc in docs:
        checker.check(doc)
    for e in checker.errors:
        print(e)
    c = checker.counts
    print("check_docs: %d document(s); %d links, %d paths, %d file names, %d config keys, "
          "%d starling commands, %d make targets checked; %d missing"
          % (len(docs), c["links"], c["paths"], c["files"], c["keys"], c["commands"], c["targets"],
             len(checker.errors)))
    return 1 if checker.errors else 0


if __name__ == "__main__":
    sys.exit(main())
