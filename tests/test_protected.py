from pathlib import Path

from skillkit.protected import is_bare_repository, protected_reason


def test_git_config_hooks_and_info_are_protected_at_any_depth(tmp_path: Path) -> None:
    for rel in (".git/config", "a/b/.git/hooks/pre-commit", "vendor/lib/.git/info/attributes"):
        assert protected_reason(tmp_path / rel) is not None, rel


def test_the_rest_of_git_stays_writable(tmp_path: Path) -> None:
    for rel in (".git/objects/ab/cdef", ".git/refs/heads/main", ".git/index", ".git/HEAD"):
        assert protected_reason(tmp_path / rel) is None, rel


def test_agent_and_editor_folders_are_protected_by_name(tmp_path: Path) -> None:
    for rel in (
        ".skillkit/plugins/evil.py",
        ".mcp.json",
        "sub/.claude/settings.json",
        ".envrc",
        ".vscode/tasks.json",
        ".idea/workspace.xml",
        ".agents/x.md",
    ):
        assert protected_reason(tmp_path / rel) is not None, rel
    assert protected_reason(tmp_path / "src" / "main.py") is None


def test_names_compare_case_insensitively(tmp_path: Path) -> None:
    assert protected_reason(tmp_path / ".GIT" / "Config") is not None
    assert protected_reason(tmp_path / ".SkillKit" / "x") is not None


def test_bare_repository_entries_are_protected(tmp_path: Path) -> None:
    bare = tmp_path / "vendor" / "lib.git"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    assert is_bare_repository(bare)
    assert protected_reason(bare / "config") is not None
    assert protected_reason(bare / "hooks" / "post-checkout") is not None
    assert protected_reason(bare / "objects" / "pack") is None
    assert protected_reason(tmp_path / "plain" / "config") is None


def test_settings_add_protected_paths(tmp_path: Path) -> None:
    extra = [tmp_path / "Makefile", tmp_path / "scripts"]
    assert protected_reason(tmp_path / "Makefile", extra=extra) is not None
    assert protected_reason(tmp_path / "scripts" / "build.sh", extra=extra) is not None
    assert protected_reason(tmp_path / "README.md", extra=extra) is None


def test_the_finder_walks_a_symlinked_root_where_it_leads(tmp_path: Path) -> None:
    from skillkit.protected import ProtectedFinder

    real = tmp_path / "real"
    (real / ".git" / "hooks").mkdir(parents=True)
    (real / ".git" / "config").write_text("")
    (tmp_path / "link").symlink_to(real)
    found = ProtectedFinder().find(tmp_path / "link").protected
    assert str(real / ".git" / "config") in found
