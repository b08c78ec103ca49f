"""What programs that reach other hosts or containers may do to this one: ``curl``,
``wget``, ``ssh``/``sftp``, ``docker``/``podman`` and compose.

Network access itself only asks; what a broad allow rule must never cover is marked
dangerous: options that run a local program or read their options from a file
(``curl -K``, ``ssh -o ProxyCommand``, ``wget -e``), reads of local files sent away
(``curl -d @/outside``, ``file:`` URLs), writes outside the workspace or into the
folders a server names, and containers given the host (privileges, host namespaces,
bind mounts of outside or protected folders). Internal to
`skillkit.permissions.classifier`.
"""

from __future__ import annotations

import os
import re

from skillkit.permissions.judging import HARMLESS_TARGETS, JudgeContext, split_args
from skillkit.permissions.judging import words as _words
from skillkit.permissions.shell import Word
from skillkit.protected import PROTECTED_NAMES, protected_reason

__all__ = ["compose", "container", "curl", "ssh", "ssh_code_option", "wget"]


_CURL_WRITES = _words(
    "-o --output --output-dir -c --cookie-jar -D --dump-header --trace --trace-ascii "
    "--stderr --libcurl --etag-save --hsts --alt-svc"
)
_CURL_UPLOADS = _words(
    "-d --data --data-binary --data-ascii --data-urlencode --json -F --form -T "
    "--upload-file -H --header -b --cookie --etag-compare --form-string"
)
_CURL_CODE = _words("-K --config --engine")
_CURL_READS = _words("--variable --netrc-file")
_CURL_VALUED = (
    _CURL_WRITES
    | _CURL_UPLOADS
    | _CURL_CODE
    | _CURL_READS
    | _words(
        "-X --request -u --user -A --user-agent -e --referer -w --write-out --url -x --proxy "
        "-m --max-time --connect-timeout -r --range -E --cert --key --cacert --capath -U "
        "--proxy-user --retry -Y -y -z --time-cond --resolve --connect-to --interface"
    )
)


def curl(args: list[Word], ctx: JudgeContext) -> None:
    options, positional, values = _curl_options(args)
    ctx.normal("network access")
    code = next((o for o in options if o in _CURL_CODE), "")
    if code:
        ctx.danger("option runs programs", f"'{ctx.text}': curl {code} reads options or loads code")
    urls = [w.text for w in positional] + [v for o, v in values if o == "--url"]
    if any(re.match(r"\s*file:", u, re.I) for u in urls):
        ctx.danger("reads local files", f"'{ctx.text}' reads local files through a file: URL")
    for option, value in values:
        if option in _CURL_WRITES and value != "-":
            if option == "--stderr" and value in HARMLESS_TARGETS:
                continue
            ctx.write([Word(value, value)])
        elif option in _CURL_UPLOADS:
            source = value[1:] if value.startswith(("@", "<")) else ""
            if option in ("-T", "--upload-file"):
                source = value
            elif option in ("-F", "--form") and re.search(r"=[@<]", value):
                source = re.split(r"=[@<]", value, maxsplit=1)[1].split(";", 1)[0]
            if source and source != "-":
                word = Word(source, source)
                ctx.read([word])
                if not ctx.inside(ctx.path(word)):
                    ctx.danger(
                        "sends a file outside the workspace",
                        f"'{ctx.text}' sends {source}, which lies outside the workspace",
                    )
        elif option in _CURL_READS:
            # --variable NAME@FILE reads a file (and --expand-... sends it); --netrc-file
            source = value.split("@", 1)[1] if option == "--variable" and "@" in value else ""
            source = value if option == "--netrc-file" else source
            if source and source != "-":
                word = Word(source, source)
                ctx.read([word])
                if option == "--variable" and not ctx.inside(ctx.path(word)):
                    ctx.danger(
                        "sends a file outside the workspace",
                        f"'{ctx.text}' reads {source}, which lies outside the workspace",
                    )
        elif option in ("-w", "--write-out") and "%output{" in value:
            ctx.danger("write outside the workspace", f"'{ctx.text}': --write-out writes a file")


def _curl_options(args: list[Word]) -> tuple[list[str], list[Word], list[tuple[str, str]]]:
    """curl's options (short ones may be bundled, ``-ofile``), operands and values."""
    options: list[str] = []
    positional: list[Word] = []
    values: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if text == "--":
            positional.extend(args[i:])
            break
        if not text.startswith("-") or text == "-":
            positional.append(args[i - 1])
            continue
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            options.append(name)
            if name in _CURL_VALUED:
                if not eq and i < len(args):
                    value = args[i].text
                    i += 1
                values.append((name, value))
            continue
        for index, letter in enumerate(text[1:]):
            option = "-" + letter
            options.append(option)
            if option in _CURL_VALUED:
                value = text[index + 2 :]
                if not value and i < len(args):
                    value = args[i].text
                    i += 1
                values.append((option, value))
                break
    return options, positional, values


def wget(args: list[Word], ctx: JudgeContext) -> None:
    _, positional, values = split_args(
        args,
        frozenset(
            {
                "-O",
                "--output-document",
                "-P",
                "--directory-prefix",
                "-o",
                "--output-file",
                "-a",
                "--append-output",
                "-e",
                "--execute",
                "--config",
                "-i",
                "--input-file",
                "--post-file",
                "--body-file",
                "--load-cookies",
                "--save-cookies",
            }
        ),
    )
    ctx.normal("network access")
    code = next((k for k in ("-e", "--execute", "--config") if k in values), "")
    if code:
        ctx.danger("option runs programs", f"'{ctx.text}': wget {code} runs wgetrc commands")
    flags = [a.text.partition("=")[0] for a in args if a.text.startswith("-")]
    creates = {"-r", "--recursive", "-m", "--mirror", "-x", "--force-directories", "-p"}
    bundled = any(
        f.startswith("-") and not f.startswith("--") and set(f[1:]) & set("rmxp")
        for f in flags
        if f not in values
    )
    if creates & set(flags) or bundled:
        ctx.danger(
            "write outside the workspace",
            f"'{ctx.text}' writes files and folders the server names (.git and .skillkit included)",
        )
    if any(re.match(r"\s*file:", p.text, re.I) for p in positional):
        ctx.danger("reads local files", f"'{ctx.text}' reads local files through a file: URL")
    for key in ("--post-file", "--body-file", "-i", "--input-file", "--load-cookies"):
        source = values.get(key)
        if source is not None and source != "-":
            word = Word(source, source)
            ctx.read([word])
            if key in ("--post-file", "--body-file") and not ctx.inside(ctx.path(word)):
                ctx.danger(
                    "sends a file outside the workspace",
                    f"'{ctx.text}' sends {source}, which lies outside the workspace",
                )
    targets = [values.get(k) for k in ("-O", "--output-document", "-P", "--directory-prefix")]
    chosen = [t for t in targets if t is not None and t != "-"]
    if not any(t is not None for t in targets[:2]):
        chosen.append(".")
    chosen += [
        v
        for k in ("-o", "--output-file", "-a", "--append-output", "--save-cookies")
        if (v := values.get(k)) is not None
    ]
    ctx.write([Word(t, t) for t in chosen])


_CONTAINER_HOST_ACCESS = re.compile(
    r"^--(privileged|cap-add|device|security-opt|userns|pid|ipc|uts|net|network|"
    r"cgroupns|volumes-from)(=|$)"
)
_CONTAINER_HOST_VALUES = _words("--pid --ipc --uts --net --network --userns --cgroupns")


def container(args: list[Word], ctx: JudgeContext) -> None:
    texts = [a.text for a in args]
    for index, text in enumerate(texts):
        following = texts[index + 1] if index + 1 < len(texts) else ""
        name, eq, value = text.partition("=")
        if name in _CONTAINER_HOST_VALUES:
            if (value if eq else following) == "host":
                ctx.danger("privilege change", f"'{ctx.text}' shares the host's {name[2:]}")
                return
        elif _CONTAINER_HOST_ACCESS.match(text) and name not in ("--volumes-from",):
            ctx.danger("privilege change", f"'{ctx.text}' gives a container host access")
            return
        if name in ("-o", "--output") and (value if eq else following):
            # docker save/export/build -o: a file or folder on the host
            ctx.write([Word(value if eq else following, value if eq else following)])
        elif name in ("--env-file", "--label-file", "--secret", "--ssh"):
            spec = value if eq else following
            found = re.search(r"(?:^|,)(?:src|source)=([^,]+)", spec)
            local = found.group(1) if found else ("" if "=" in spec else spec)
            word = Word(local, local)
            if local and local != "default":
                ctx.read([word])
                if not ctx.inside(ctx.path(word)):
                    ctx.danger(
                        "sends a file outside the workspace",
                        f"'{ctx.text}' gives a container {local}, outside the workspace",
                    )
                    return
        source = ""
        if name in ("-v", "--volume"):
            spec = value if eq else following
            source = spec.split(":", 1)[0] if ":" in spec else ""
        elif text.startswith("-v") and len(text) > 2 and ":" in text:
            source = text[2:].split(":", 1)[0]
        elif name == "--mount":
            for field_text in (value if eq else following).split(","):
                key, _, val = field_text.partition("=")
                if key in ("src", "source"):
                    source = val
        if source and source.startswith(("/", "~", ".")):
            word = Word(source, source)
            if source.startswith("~"):
                ctx.danger("privilege change", f"'{ctx.text}' mounts {source} into a container")
                return
            path = ctx.path(word)
            if not ctx.inside(path) or (path is not None and _protected_mount(path)):
                ctx.danger(
                    "privilege change",
                    f"'{ctx.text}' mounts {source}, outside the workspace or a protected "
                    "folder, into a container",
                )
                return
    sub = next((t for t in texts if not t.startswith("-")), "")
    if sub in ("ps", "images", "inspect", "logs", "version", "info", "stats", "top", "port"):
        return
    after = args[texts.index(sub) + 1 :] if sub else []
    operands = [a for a in after if not a.text.startswith("-")]
    if sub == "cp" and len(operands) == 2 and ":" not in operands[1].text.split("/", 1)[0]:
        ctx.write(operands[1:])  # docker cp CONTAINER:SRC HOST_DEST
    if sub in ("build", "buildx") and operands:
        context = operands[-1]
        if not re.match(r"^[a-z]+://|^-$", context.text) and not ctx.inside(ctx.path(context)):
            ctx.danger(
                "sends a file outside the workspace",
                f"'{ctx.text}' sends {context.text} to the container engine as build context",
            )
            return
    if sub == "compose":
        compose(args[texts.index(sub) + 1 :], ctx)
        return
    ctx.normal("may change state")


def compose(args: list[Word], ctx: JudgeContext) -> None:
    sub = next((a.text for a in args if not a.text.startswith("-")), "")
    if sub in ("ps", "ls", "logs", "config", "version", "images", "top", "port"):
        return
    ctx.danger(
        "runs containers a file describes",
        f"'{ctx.text}': the compose file may mount any host folder or run anything",
    )


def _protected_mount(path: str) -> bool:
    """Whether a bind mount of ``path`` gives a container a path that makes code run
    later: the path itself is protected (`skillkit.protected`) or holds one directly
    (a folder with ``.git`` or ``.skillkit``, such as the workspace)."""
    if protected_reason(path) is not None:
        return True
    return any(os.path.lexists(os.path.join(path, name)) for name in (".git", *PROTECTED_NAMES))


# ssh configuration keys that run a local program, load code, or write local files
_SSH_CODE_KEYS = _words(
    (
        "ProxyCommand LocalCommand PermitLocalCommand KnownHostsCommand PKCS11Provider "
        "SecurityKeyProvider Include Match ControlPath ControlMaster UserKnownHostsFile "
        "GlobalKnownHostsFile IdentityAgent XAuthLocation ProxyUseFdpass SendEnv SetEnv "
        "ForwardAgent ForwardX11 ForwardX11Trusted"
    ).casefold()
)
# options whose value is a configuration file, log file, library or program
_SSH_CODE_OPTIONS = _words("-F -E -I -S -D")
_SSH_VALUED = _words("-b -c -e -i -J -l -L -m -O -p -Q -R -w -W -B -o -F -E -I -S -D -P")


def ssh(args: list[Word], ctx: JudgeContext) -> None:
    ctx.normal("network access")
    found = ssh_code_option(args, ctx.text.split()[0] if ctx.text else "ssh")
    if found:
        ctx.danger("option runs programs", f"'{ctx.text}': {found} runs a program or writes a file")


def ssh_code_option(args: list[Word], program: str) -> str:
    """The option of an ssh/scp/sftp command that runs a local program, loads code or
    writes a local file (``-o ProxyCommand=...``, ``-F config``, ``scp -S prog``); ""."""
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if text == "--" or not text.startswith("-") or text == "-":
            if program == "ssh":
                break  # the host: what follows is the remote command
            continue
        for index, letter in enumerate(text[1:]):
            option = "-" + letter
            if option not in _SSH_VALUED:
                continue
            value = text[index + 2 :]
            if not value and i < len(args):
                value = args[i].text
                i += 1
            if option == "-o":
                key = re.split(r"[\s=]", value.strip(), maxsplit=1)[0].casefold()
                if key in _SSH_CODE_KEYS:
                    return f"-o {key}"
            elif option in _SSH_CODE_OPTIONS and not (option == "-D" and program == "ssh"):
                return option
            break
    return ""
