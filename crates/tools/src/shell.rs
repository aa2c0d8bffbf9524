//! A small lexer for bash command lines, enough for approval decisions.
//!
//! It is not a shell parser: it splits a line into simple commands at
//! control operators, removes quoting, collects redirections and the text of
//! command substitutions. Anything it does not understand makes the result
//! less trusted (see [`Script::complete`]), never more.

/// The control operator before a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sep {
    /// First command, or after `;`, `&`, newline, `(` or `)`.
    Seq,
    /// `|` or `|&`: this command reads the previous one's output.
    Pipe,
    And,
    Or,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// Explicit file descriptor (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator: `>`, `>>`, `>|`, `&>`, `&>>`, `>&`, `<`, `<<`, `<<-`, `<<<`, `<&`, `<>`.
    pub op: String,
    /// Target word with quoting removed (heredoc: the delimiter).
    pub target: String,
}

impl Redirect {
    /// Whether this redirection writes to a file (fd duplication such as
    /// `2>&1` and closing `>&-` do not).
    pub fn writes(&self) -> bool {
        match self.op.as_str() {
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => true,
            // `>&word`: a digit or `-` duplicates/closes; anything else is a file.
            ">&" => !(self.target == "-" || self.target.chars().all(|c| c.is_ascii_digit())),
            _ => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub sep: Sep,
    /// Words with quoting removed; substitutions kept as their source text.
    pub words: Vec<String>,
    pub redirects: Vec<Redirect>,
    /// Inner text of `$(...)`, backticks and `<(...)`/`>(...)` in this command.
    pub substitutions: Vec<String>,
}

impl SimpleCommand {
    fn new(sep: Sep) -> Self {
        SimpleCommand {
            sep,
            words: Vec::new(),
            redirects: Vec::new(),
            substitutions: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.redirects.is_empty() && self.substitutions.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Script {
    pub commands: Vec<SimpleCommand>,
    /// False when a quote, substitution or heredoc was left open.
    pub complete: bool,
    /// A heredoc with an unquoted delimiter whose body contains `$(` or a
    /// backtick: the body runs commands.
    pub heredoc_substitution: bool,
}

pub(crate) fn parse(line: &str) -> Script {
    let mut lx = Lexer {
        chars: line.chars().collect(),
        i: 0,
        word: None,
        word_quoted: false,
        cmd: SimpleCommand::new(Sep::Seq),
        pending_redirect: None,
        heredocs: Vec::new(),
        out: Script {
            commands: Vec::new(),
            complete: true,
            heredoc_substitution: false,
        },
    };
    lx.run();
    lx.out
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    word: Option<String>,
    word_quoted: bool,
    cmd: SimpleCommand,
    pending_redirect: Option<(Option<u32>, String)>,
    /// Heredocs whose bodies start after the next newline: (delimiter, strip tabs, quoted).
    heredocs: Vec<(String, bool, bool)>,
    out: Script,
}

impl Lexer {
    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.i + off).copied()
    }

    fn word(&mut self) -> &mut String {
        self.word.get_or_insert_with(String::new)
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            let next = self.peek(1);
            match c {
                ' ' | '\t' | '\r' => {
                    self.finish_word();
                    self.i += 1;
                }
                '\n' => {
                    self.finish_command(Sep::Seq);
                    self.i += 1;
                    self.skip_heredoc_bodies();
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\\' => {
                    self.word_quoted = true;
                    match next {
                        Some('\n') => {}
                        Some(n) => self.word().push(n),
                        None => {}
                    }
                    self.i += 2;
                }
                '\'' => {
                    self.word_quoted = true;
                    self.word();
                    self.i += 1;
                    match self.chars[self.i..].iter().position(|&c| c == '\'') {
                        Some(len) => {
                            let s: String = self.chars[self.i..self.i + len].iter().collect();
                            self.word().push_str(&s);
                            self.i += len + 1;
                        }
                        None => {
                            self.out.complete = false;
                            self.i = self.chars.len();
                        }
                    }
                }
                '"' => self.double_quoted(),
                '`' => self.backtick(),
                '$' if next == Some('(') => self.substitution(1),
                '$' if next == Some('{') => {
                    // Parameter expansion: keep verbatim up to the closing brace.
                    let start = self.i;
                    while self.peek(0).is_some_and(|c| c != '}') {
                        self.i += 1;
                    }
                    self.i = (self.i + 1).min(self.chars.len());
                    let s: String = self.chars[start..self.i].iter().collect();
                    self.word().push_str(&s);
                }
                '<' | '>' if next == Some('(') && self.word.is_none() => self.substitution(1),
                '|' => match next {
                    Some('|') => self.operator(2, Sep::Or),
                    Some('&') => self.operator(2, Sep::Pipe),
                    _ => self.operator(1, Sep::Pipe),
                },
                '&' if next == Some('&') => self.operator(2, Sep::And),
                '&' if next == Some('>') => {
                    self.finish_word();
                    let op = if self.peek(2) == Some('>') {
                        "&>>"
                    } else {
                        "&>"
                    };
                    self.i += op.len();
                    self.pending_redirect = Some((None, op.to_string()));
                }
                '&' | ';' | '(' | ')' => self.operator(1, Sep::Seq),
                '<' | '>' => self.redirect(),
                _ => {
                    self.word().push(c);
                    self.i += 1;
                }
            }
        }
        self.finish_command(Sep::Seq);
        if self.pending_redirect.is_some() || !self.heredocs.is_empty() {
            self.out.complete = false;
        }
    }

    fn operator(&mut self, len: usize, sep: Sep) {
        self.finish_command(sep);
        self.i += len;
    }

    fn redirect(&mut self) {
        // A word made only of digits right before the operator is its fd (`2>`).
        let fd = match &self.word {
            Some(w)
                if !w.is_empty() && !self.word_quoted && w.chars().all(|c| c.is_ascii_digit()) =>
            {
                let fd = w.parse().ok();
                self.word = None;
                fd
            }
            _ => {
                self.finish_word();
                None
            }
        };
        const OPS: [&str; 10] = ["<<<", "<<-", ">>", ">|", ">&", "<<", "<&", "<>", ">", "<"];
        let rest: String = self.chars[self.i..].iter().take(3).collect();
        let op = OPS
            .iter()
            .find(|op| rest.starts_with(*op))
            .copied()
            .unwrap_or(">");
        self.i += op.len();
        self.pending_redirect = Some((fd, op.to_string()));
    }

    fn double_quoted(&mut self) {
        self.word_quoted = true;
        self.word();
        self.i += 1;
        loop {
            match self.peek(0) {
                None => {
                    self.out.complete = false;
                    return;
                }
                Some('"') => {
                    self.i += 1;
                    return;
                }
                Some('\\') => {
                    match self.peek(1) {
                        Some(c @ ('"' | '\\' | '$' | '`')) => self.word().push(c),
                        Some('\n') => {}
                        Some(c) => {
                            self.word().push('\\');
                            self.word().push(c);
                        }
                        None => {}
                    }
                    self.i += 2;
                }
                Some('$') if self.peek(1) == Some('(') => self.substitution(1),
                Some('`') => self.backtick(),
                Some(c) => {
                    self.word().push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// `$(...)`, `<(...)` or `>(...)` starting at `self.i`; `skip` is the
    /// length of the sigil before the parenthesis.
    fn substitution(&mut self, skip: usize) {
        let start = self.i;
        let body_start = self.i + skip + 1;
        let mut j = body_start;
        let mut depth = 1;
        while j < self.chars.len() {
            match self.chars[j] {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                '\\' => j += 1,
                q @ ('\'' | '"') => {
                    j += 1;
                    while j < self.chars.len() && self.chars[j] != q {
                        if q == '"' && self.chars[j] == '\\' {
                            j += 1;
                        }
                        j += 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let end = j.min(self.chars.len());
        if j >= self.chars.len() {
            self.out.complete = false;
        }
        let inner: String = self.chars[body_start.min(end)..end].iter().collect();
        let source: String = self.chars[start..(end + 1).min(self.chars.len())]
            .iter()
            .collect();
        self.word().push_str(&source);
        self.cmd.substitutions.push(inner);
        self.i = end + 1;
    }

    fn backtick(&mut self) {
        let start = self.i + 1;
        let mut j = start;
        while j < self.chars.len() && self.chars[j] != '`' {
            if self.chars[j] == '\\' {
                j += 1;
            }
            j += 1;
        }
        if j >= self.chars.len() {
            self.out.complete = false;
        }
        let end = j.min(self.chars.len());
        let inner: String = self.chars[start..end].iter().collect();
        self.word().push_str(&format!("`{inner}`"));
        self.cmd.substitutions.push(inner);
        self.i = end + 1;
    }

    fn finish_word(&mut self) {
        let quoted = std::mem::take(&mut self.word_quoted);
        let Some(w) = self.word.take() else { return };
        match self.pending_redirect.take() {
            Some((fd, op)) => {
                if op == "<<" || op == "<<-" {
                    self.heredocs.push((w.clone(), op == "<<-", quoted));
                }
                self.cmd.redirects.push(Redirect { fd, op, target: w });
            }
            None => self.cmd.words.push(w),
        }
    }

    fn finish_command(&mut self, next: Sep) {
        self.finish_word();
        let cmd = std::mem::replace(&mut self.cmd, SimpleCommand::new(next));
        if !cmd.is_empty() {
            self.out.commands.push(cmd);
        } else if cmd.sep == Sep::Pipe && next == Sep::Seq {
            // `a | (b)`: the `(` ended an empty command; b still reads a's output.
            self.cmd.sep = Sep::Pipe;
        }
    }

    fn skip_heredoc_bodies(&mut self) {
        for (delim, strip_tabs, quoted) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.i >= self.chars.len() {
                    self.out.complete = false;
                    return;
                }
                let len = self.chars[self.i..]
                    .iter()
                    .position(|&c| c == '\n')
                    .unwrap_or(self.chars.len() - self.i);
                let line: String = self.chars[self.i..self.i + len].iter().collect();
                self.i += len + 1;
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delim {
                    break;
                }
                if !quoted && (line.contains("$(") || line.contains('`')) {
                    self.out.heredoc_substitution = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line).commands.into_iter().map(|c| c.words).collect()
    }

    #[test]
    fn splits_on_operators_and_unquotes() {
        assert_eq!(
            words("ls -la 'a b' | grep \"x\\\"y\" && echo hi;pwd\nwc"),
            vec![
                vec!["ls", "-la", "a b"],
                vec!["grep", "x\"y"],
                vec!["echo", "hi"],
                vec!["pwd"],
                vec!["wc"],
            ]
        );
        let s = parse("a | b || c && d");
        let seps: Vec<Sep> = s.commands.iter().map(|c| c.sep).collect();
        assert_eq!(seps, vec![Sep::Seq, Sep::Pipe, Sep::Or, Sep::And]);
    }

    #[test]
    fn redirections() {
        let s = parse("cmd 2>&1 >out.txt < in >>log &>/dev/null");
        let r = &s.commands[0].redirects;
        assert_eq!(s.commands[0].words, vec!["cmd"]);
        assert_eq!(
            (r[0].fd, r[0].op.as_str(), r[0].target.as_str()),
            (Some(2), ">&", "1")
        );
        assert!(!r[0].writes());
        assert!(r[1].writes() && r[1].target == "out.txt");
        assert_eq!((r[2].op.as_str(), r[2].target.as_str()), ("<", "in"));
        assert_eq!((r[3].op.as_str(), r[3].target.as_str()), (">>", "log"));
        assert_eq!(
            (r[4].op.as_str(), r[4].target.as_str()),
            ("&>", "/dev/null")
        );
    }

    #[test]
    fn substitutions_and_heredocs() {
        let s = parse("echo $(rm -rf x) `id` \"$(date)\" <(ls)");
        assert_eq!(
            s.commands[0].substitutions,
            vec!["rm -rf x", "id", "date", "ls"]
        );
        let s = parse("cat <<'EOF'\n$(rm x)\nEOF\nls");
        assert!(s.complete && !s.heredoc_substitution);
        assert_eq!(s.commands.len(), 2);
        let s = parse("cat <<EOF\n$(rm x)\nEOF");
        assert!(s.heredoc_substitution);
        assert!(!parse("echo 'open").complete);
        assert_eq!(words("echo hi # rm -rf /"), vec![vec!["echo", "hi"]]);
    }
}
