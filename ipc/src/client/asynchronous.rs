//! The tokio client: [`AsyncClient`], the same protocol and retry rules as the blocking
//! [`Client`](super::Client).

use super::*;

/// An async (tokio) client.
pub struct AsyncClient {
    conn: tokio::io::BufReader<interprocess::local_socket::tokio::Stream>,
    next_id: u64,
    path: PathBuf,
    timeout: Option<std::time::Duration>,
    stale: bool,
}

impl AsyncClient {
    /// Connects to the daemon listening on `path`.
    pub async fn connect(path: &Path) -> Result<AsyncClient, ClientError> {
        let conn = Self::open(path).await?;
        Ok(AsyncClient {
            conn,
            next_id: 1,
            path: path.to_path_buf(),
            timeout: Some(DEFAULT_REPLY_TIMEOUT),
            stale: false,
        })
    }

    /// How long each call waits for its reply (`None`: for ever; default
    /// [`DEFAULT_REPLY_TIMEOUT`]).
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.timeout = timeout.filter(|t| !t.is_zero());
    }

    async fn open(
        path: &Path,
    ) -> Result<tokio::io::BufReader<interprocess::local_socket::tokio::Stream>, ClientError> {
        use interprocess::local_socket::tokio::prelude::*;
        let err = |source| ClientError::Connect { path: path.to_path_buf(), source };
        let name = socket_name(path).map_err(err)?;
        let conn = interprocess::local_socket::tokio::Stream::connect(name).await.map_err(err)?;
        Ok(tokio::io::BufReader::new(conn))
    }

    /// Calls a method with JSON params; returns the JSON result. Sent again once on a new
    /// connection when the daemon had closed this one without reading the request.
    pub async fn call_value(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        if self.stale {
            self.conn = Self::open(&self.path).await?;
            self.stale = false;
        }
        let id = self.next_id;
        self.next_id += 1;
        let request = encode(id, method, params);
        let timeout = self.timeout;
        let call = async {
            match self.exchange(&request, id).await {
                Err(Attempt::Resend(_)) => {
                    self.conn = Self::open(&self.path).await?;
                    self.exchange(&request, id).await.map_err(Attempt::into_error)
                }
                r => r.map_err(Attempt::into_error),
            }
        };
        let Some(after) = timeout else { return call.await };
        let out = tokio::time::timeout(after, call).await;
        match out {
            Ok(out) => out,
            Err(_) => {
                self.stale = true;
                Err(ClientError::Timeout { method: method.to_string(), after })
            }
        }
    }

    async fn exchange(&mut self, request: &[u8], id: u64) -> Result<Value, Attempt> {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        if let Err(e) = self.conn.get_mut().write_all(request).await {
            if !closed_before_sent(&e) {
                return Err(Attempt::Failed(e.into()));
            }
            let mut line = Vec::new();
            let said = tokio::time::timeout(LAST_WORDS, self.conn.read_until(b'\n', &mut line)).await;
            if let Ok(Ok(_)) = said
                && let Ok(Response { error: Some(err), .. }) = serde_json::from_slice(line.trim_ascii_end())
            {
                return Err(Attempt::Failed(ClientError::Server(err)));
            }
            return Err(Attempt::Resend(e.into()));
        }
        let mut line = Vec::new();
        match self.conn.read_until(b'\n', &mut line).await {
            Ok(_) => decode(line.trim_ascii_end(), id).map_err(Attempt::Failed),
            Err(e) if reset_unread(&e, &line) => Err(Attempt::Resend(e.into())),
            Err(e) => Err(Attempt::Failed(e.into())),
        }
    }

    /// Calls a method with typed params and result.
    pub async fn call<P: Serialize, R: DeserializeOwned>(
        &mut self,
        method: &str,
        p: &P,
    ) -> Result<R, ClientError> {
        let v = self.call_value(method, params(p)?).await?;
        result(v)
    }

    /// Calls method `M` with the params and result types the registry declares for it.
    pub async fn send<M: MethodSpec>(&mut self, p: &M::Params) -> Result<M::Result, ClientError> {
        self.call(M::METHOD.name(), p).await
    }

    /// `remember`.
    pub async fn remember(&mut self, memory: &NewMemory) -> Result<RememberResult, ClientError> {
        self.send::<method::Remember>(&RememberParams::from(memory.clone())).await
    }

    /// `recall`.
    pub async fn recall(&mut self, p: &RecallParams) -> Result<RecallResult, ClientError> {
        self.send::<method::Recall>(p).await
    }

    /// `get`.
    pub async fn get(&mut self, id: &MemoryId) -> Result<MemoryResult, ClientError> {
        self.send::<method::Get>(&GetParams { id: id.to_string(), session_id: None }).await
    }

    /// `status`.
    pub async fn status(&mut self) -> Result<StatusResult, ClientError> {
        self.send::<method::Status>(&NoParams).await
    }
}
