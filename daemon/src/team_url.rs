//! `[team] url` read by the PostgreSQL client's own parser, and the password found for it
//! (the environment, else `~/.pgpass`). Compiled with the `team` feature only.

use std::path::Path;

/// Why `[team] url` cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TeamUrlError {
    /// The PostgreSQL client cannot read it.
    #[error(
        "team.url is not a PostgreSQL connection string the client can read ({detail}): write it as postgres://USER@HOST:PORT/DATABASE"
    )]
    Unreadable { detail: String },
    /// It holds a password (never repeated here).
    #[error(
        "team.url holds a password ({form}): take it out, and put the password in the environment variable {env} (team.password_env) or in ~/.pgpass (host:port:database:user:password, mode 0600)"
    )]
    Password { form: &'static str, env: String },
}

/// `[team] url` read by the PostgreSQL client's own parser (a `postgres://` URL or the
/// key=value form), refused when it holds a password in any form: `user:password@`,
/// a `password=` query parameter, or a `password=` pair.
pub(crate) fn parse_url(url: &str, env: &str) -> Result<postgres::Config, TeamUrlError> {
    let config = url.parse::<postgres::Config>().map_err(|e| {
        let mut detail = e.to_string();
        if let Some(source) = std::error::Error::source(&e) {
            detail = format!("{detail}: {source}");
        }
        TeamUrlError::Unreadable { detail }
    })?;
    if config.get_password().is_some() {
        let form = match url.split_once("://") {
            Some((_, rest)) => match rest.split(['/', '?']).next().and_then(|a| a.split_once('@')) {
                Some((userinfo, _)) if userinfo.contains(':') => "as user:password@ in the URL",
                _ => "as a password= query parameter",
            },
            None => "as a password= pair",
        };
        return Err(TeamUrlError::Password { form, env: env.to_string() });
    }
    Ok(config)
}

/// The password for the database `config` names: the environment variable `env`, else
/// the first matching line of `~/.pgpass` (or `$PGPASSFILE`), as libpq reads it.
pub(crate) fn password_for(config: &postgres::Config, env: &str) -> Option<String> {
    let file = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")));
    password_from(config, std::env::var(env).ok(), file.as_deref())
}

fn password_from(
    config: &postgres::Config,
    env_value: Option<String>,
    pgpass: Option<&Path>,
) -> Option<String> {
    if let Some(p) = env_value.filter(|p| !p.is_empty()) {
        return Some(p);
    }
    let text = std::fs::read_to_string(pgpass?).ok()?;
    // As libpq: a socket directory matches `localhost`; the user defaults to the
    // login name, the database to the user.
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432).to_string();
    let user =
        config.get_user().map(str::to_string).unwrap_or_else(|| std::env::var("USER").unwrap_or_default());
    let db = config.get_dbname().map(str::to_string).unwrap_or_else(|| user.clone());
    text.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let f = pgpass_fields(line);
        let fits = |pat: &str, v: &str| pat == "*" || pat == v;
        (f.len() == 5 && fits(&f[0], &host) && fits(&f[1], &port) && fits(&f[2], &db) && fits(&f[3], &user))
            .then(|| f[4].clone())
    })
}

/// A `.pgpass` line's fields: split at `:`, with `\:` and `\\` standing for `:` and `\`.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one field at least").extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one field at least").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_refused_in_every_form_and_never_repeated() {
        for (url, form) in [
            ("postgres://agent:s3cret@db:5432/amber", "user:password@"),
            ("postgresql://agent:@db/amber", "user:password@"),
            ("postgres://agent@db/amber?password=s3cret", "query parameter"),
            ("postgres://agent@db/amber?sslmode=disable&password=s3cret", "query parameter"),
            ("host=db user=agent password=s3cret dbname=amber", "password= pair"),
            ("host=db user=agent password='s3 cret' dbname=amber", "password= pair"),
        ] {
            let err = parse_url(url, "AMBER_TEAM_PASSWORD").unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, TeamUrlError::Password { .. }), "{url}: {text}");
            assert!(
                text.contains(form) && text.contains("AMBER_TEAM_PASSWORD") && text.contains("~/.pgpass"),
                "{text}"
            );
            assert!(!text.contains("s3cret") && !text.contains("s3 cret"), "{text}");
        }
        let err = parse_url("postgres://agent@db:notaport/amber", "X").unwrap_err();
        assert!(matches!(err, TeamUrlError::Unreadable { .. }), "{err}");
        assert!(parse_url("postgres://agent@db:5432/amber", "X").is_ok());
        assert!(parse_url("host=db user=agent dbname=amber", "X").is_ok());
    }

    #[test]
    fn the_password_comes_from_the_environment_else_pgpass() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:amber:agent:wrong\ndb:*:amber:agent:right\ndb:*:amber:a\\:b:es\\:caped\n",
        )
        .unwrap();
        let config = |url: &str| parse_url(url, "X").unwrap();
        let url = config("postgres://agent@db:6543/amber");
        assert_eq!(password_from(&url, None, Some(&file)).as_deref(), Some("right"));
        assert_eq!(
            password_from(&config("host=db port=6543 user=agent dbname=amber"), None, Some(&file)).as_deref(),
            Some("right"),
            "the key=value form too"
        );
        assert_eq!(password_from(&url, Some("env".into()), Some(&file)).as_deref(), Some("env"));
        assert_eq!(password_from(&config("postgres://someone@db:6543/amber"), None, Some(&file)), None);
        assert_eq!(
            password_from(&config("host=db user='a:b' dbname=amber"), None, Some(&file)).as_deref(),
            Some("es:caped")
        );
        assert_eq!(password_from(&url, None, None), None);
    }
}
