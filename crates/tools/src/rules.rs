//! Per-program rules of the shell classifier: which invocations only read,
//! and which are destructive enough to call "dangerous".
//!
//! The read-only list is an allow-list: a program not named here is not
//! read-only. Each entry also rejects the options that make an otherwise
//! harmless program write (`sort -o`, `find -delete`, `sed -i`, ...).

/// Whether `prog args...` only reads. `prog` is a bare program name.
pub(crate) fn read_only(prog: &str, args: &[String]) -> bool {
    match prog {
        "ls" | "cat" | "head" | "tail" | "wc" | "grep" | "egrep" | "fgrep" | "pwd" | "echo"
        | "printf" | "which" | "whoami" | "file" | "stat" | "du" | "df" | "cut" | "tr" | "diff"
        | "cmp" | "uname" | "id" | "basename" | "dirname" | "realpath" | "readlink" | "nl"
        | "true" | "false" | "printenv" | "md5sum" | "sha1sum" | "sha256sum" | "type" | "cd"
        | "test" | "[" | "whereis" => true,
        // `hostname NAME` sets the host name.
        "hostname" => args.is_empty(),
        // --pre runs an arbitrary preprocessor program on every file.
        "rg" => !args.iter().any(|a| a == "--pre" || a.starts_with("--pre=")),
        "find" => !args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "date" => !args
            .iter()
            .any(|a| a == "-s" || a.starts_with("--set") || short_flags(a).contains('s')),
        "tree" => !args.iter().any(|a| a == "-o" || a.starts_with("-o")),
        "sort" => !args
            .iter()
            .any(|a| a.starts_with("--output") || short_flags(a).contains('o')),
        // `uniq IN OUT` writes OUT.
        "uniq" => positionals(args).len() <= 1,
        // `env CMD` runs CMD (with a modified environment).
        "env" => args.iter().all(|a| a == "-0" || a == "--null"),
        "git" => git_read_only(args),
        "cargo" => matches!(
            args.first().map(String::as_str),
            Some("tree" | "metadata" | "--version" | "-V" | "version" | "--list")
        ),
        "sed" => sed_read_only(args),
        _ => false,
    }
}

/// The letters of a short-option cluster (`-nE` → "nE"), else "".
fn short_flags(arg: &str) -> &str {
    match arg.strip_prefix('-') {
        Some(rest) if !rest.starts_with('-') => rest,
        _ => "",
    }
}

fn positionals(args: &[String]) -> Vec<&str> {
    args.iter()
        .filter(|a| !a.starts_with('-') || a.as_str() == "-")
        .map(String::as_str)
        .collect()
}

fn git_read_only(args: &[String]) -> bool {
    // Global options before the subcommand. `-c` can set an alias or pager to
    // any program, so it disqualifies.
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "--no-pager" | "-P" | "--no-optional-locks" | "--bare" => i += 1,
            "-C" => i += 2,
            a if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => i += 1,
            a if a.starts_with('-') => return false,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else { return true };
    let rest = &args[i + 1..];
    let has = |names: &[&str]| rest.iter().any(|a| names.contains(&a.as_str()));
    let no_output_file = !rest.iter().any(|a| a.starts_with("--output"));
    match sub.as_str() {
        "status" | "rev-parse" | "ls-files" | "blame" | "ls-tree" | "cat-file" | "describe"
        | "shortlog" | "grep" | "show-ref" | "rev-list" | "merge-base" | "version" => true,
        "log" | "diff" | "show" => no_output_file,
        "branch" | "tag" => {
            let modifying: &[&str] = if sub == "branch" {
                &[
                    "-d",
                    "-D",
                    "-m",
                    "-M",
                    "-c",
                    "-C",
                    "-f",
                    "-u",
                    "--delete",
                    "--move",
                    "--copy",
                    "--force",
                    "--set-upstream-to",
                    "--unset-upstream",
                    "--edit-description",
                ]
            } else {
                &[
                    "-d",
                    "-a",
                    "-s",
                    "-u",
                    "-m",
                    "-f",
                    "-F",
                    "--delete",
                    "--annotate",
                    "--sign",
                    "--force",
                ]
            };
            if rest
                .iter()
                .any(|a| modifying.contains(&a.as_str()) || a.starts_with("--set-upstream-to="))
            {
                return false;
            }
            // Without a listing option, a positional argument creates a branch/tag.
            let listing = has(&[
                "-l",
                "--list",
                "-a",
                "--all",
                "-r",
                "--remotes",
                "--contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "-v",
                "-vv",
                "--show-current",
                "-n",
            ]);
            listing || positionals(rest).is_empty()
        }
        "remote" => matches!(
            positionals(rest).first().copied(),
            None | Some("show" | "get-url")
        ),
        "stash" => matches!(positionals(rest).first().copied(), Some("list" | "show")),
        "reflog" => matches!(positionals(rest).first().copied(), None | Some("show")),
        "config" => has(&["--get", "--get-all", "--get-regexp", "--list", "-l"]),
        _ => false,
    }
}

/// `sed` reads only when it prints selected lines: `-n`, no in-place editing,
/// and scripts made of addresses and print-like commands (the `w`, `e` and
/// `s///w` commands would write files or run programs).
fn sed_read_only(args: &[String]) -> bool {
    let mut quiet = false;
    let mut scripts = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-e" | "--expression" => {
                match args.get(i + 1) {
                    Some(s) => scripts.push(s.as_str()),
                    None => return false,
                }
                i += 1;
            }
            "-E" | "-r" | "--regexp-extended" | "-s" | "--separate" | "-u" | "-z" => {}
            a if a.starts_with("--expression=") => scripts.push(&a["--expression=".len()..]),
            a if a.starts_with("--") => return false, // --in-place, --file, unknown
            a if a.starts_with('-') && a.len() > 1 => {
                let flags = &a[1..];
                // -i (in place) and -f (script file we cannot inspect).
                if flags.contains('i') || flags.contains('f') {
                    return false;
                }
                if flags.chars().any(|c| !"nErsuz".contains(c)) && !flags.ends_with('e') {
                    return false;
                }
                quiet |= flags.contains('n');
                if flags.ends_with('e') {
                    match args.get(i + 1) {
                        Some(s) => scripts.push(s.as_str()),
                        None => return false,
                    }
                    i += 1;
                }
            }
            _ => files.push(a.as_str()),
        }
        i += 1;
    }
    if scripts.is_empty() {
        if files.is_empty() {
            return false;
        }
        scripts.push(files.remove(0));
    }
    quiet && scripts.iter().all(|s| safe_sed_script(s))
}

fn safe_sed_script(script: &str) -> bool {
    let mut chars = script.chars();
    let mut rest = String::new();
    while let Some(c) = chars.next() {
        if c == '/' {
            // Skip a /regex/ address, honouring \/ escapes.
            let mut closed = false;
            while let Some(r) = chars.next() {
                match r {
                    '\\' => {
                        chars.next();
                    }
                    '/' => {
                        closed = true;
                        break;
                    }
                    _ => {}
                }
            }
            if !closed {
                return false;
            }
        } else {
            rest.push(c);
        }
    }
    rest.chars()
        .all(|c| c.is_ascii_digit() || " \t\n,;$!{}=~+pnlqQ".contains(c))
}

/// Whether `prog args...` is destructive beyond what an approval prompt
/// should wave through: system-wide deletion, privilege escalation,
/// disk formatting, history rewriting on a remote.
pub(crate) fn dangerous(prog: &str, args: &[String]) -> bool {
    let recursive = args.iter().any(|a| {
        a == "--recursive" || short_flags(a).contains('r') || short_flags(a).contains('R')
    });
    match prog {
        "sudo" | "su" | "doas" | "pkexec" => true,
        p if p.starts_with("mkfs") => true,
        "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "parted" => true,
        "shutdown" | "reboot" | "halt" | "poweroff" => true,
        "init" | "telinit" => args.iter().any(|a| a == "0" || a == "6"),
        "systemctl" => args
            .iter()
            .any(|a| matches!(a.as_str(), "poweroff" | "reboot" | "halt" | "kexec")),
        "dd" => args.iter().any(|a| a.starts_with("of=")),
        "rm" => {
            args.iter().any(|a| a == "--no-preserve-root")
                || (recursive && args.iter().any(|a| critical_target(a)))
        }
        "chmod" | "chown" | "chgrp" => recursive && args.iter().any(|a| critical_target(a)),
        "git" => git_dangerous(args),
        _ => false,
    }
}

fn git_dangerous(args: &[String]) -> bool {
    // Skip global options (and the values of -C/-c) to find the subcommand.
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-C" | "-c" => i += 2,
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else { return false };
    let rest = &args[i + 1..];
    match sub.as_str() {
        "push" => rest.iter().any(|a| {
            a == "--force"
                || a == "--mirror"
                || a.starts_with("--force-with-lease")
                || a.starts_with('+')
                || short_flags(a).contains('f')
        }),
        "reset" => rest.iter().any(|a| a == "--hard"),
        "clean" => rest
            .iter()
            .any(|a| a == "--force" || short_flags(a).contains('f')),
        _ => false,
    }
}

/// `/`, top-level directories, home, `*`, `.`: recursive operations on
/// these wipe or break far more than a project.
fn critical_target(arg: &str) -> bool {
    if arg.starts_with('-') && arg != "-" {
        return false;
    }
    let mut t = arg;
    while let Some(s) = t.strip_suffix("/*").or_else(|| t.strip_suffix("/.*")) {
        t = s;
    }
    if t.len() > 1 {
        t = t.trim_end_matches('/');
    }
    if matches!(
        t,
        "" | "/" | "*" | ".*" | "~" | "." | ".." | "$HOME" | "${HOME}" | "~/" | "$HOME/"
    ) {
        return true;
    }
    // Absolute paths with a single component: /usr, /etc, /home, ...
    t.starts_with('/') && t[1..].split('/').filter(|c| !c.is_empty()).count() <= 1
}

/// Programs that run their arguments as a command; for danger detection we
/// look through them (`nohup rm -rf /` is as bad as `rm -rf /`). Returns how
/// many leading words belong to the wrapper.
pub(crate) fn wrapper_len(words: &[String]) -> Option<usize> {
    let prog = words.first()?.rsplit('/').next()?;
    let skip_opts = |from: usize| {
        let mut i = from;
        while words.get(i).is_some_and(|w| w.starts_with('-')) {
            i += 1;
        }
        i
    };
    match prog {
        "nohup" | "time" | "command" | "exec" | "builtin" | "stdbuf" | "ionice" | "xargs"
        | "setsid" => Some(skip_opts(1)),
        "nice" => {
            let i = skip_opts(1);
            // `nice -n 10 cmd`: the priority follows -n.
            Some(if words.get(1).is_some_and(|w| w == "-n") {
                i + 1
            } else {
                i
            })
        }
        "timeout" => Some(skip_opts(1) + 1),
        "env" => {
            let mut i = skip_opts(1);
            while words.get(i).is_some_and(|w| is_assignment(w)) {
                i += 1;
            }
            Some(i)
        }
        _ => None,
    }
}

/// `NAME=value`.
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}
