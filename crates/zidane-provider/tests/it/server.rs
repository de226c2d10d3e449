//! A loopback HTTP/1.1 server that replays scripted responses byte for byte,
//! records what it received, and can misbehave on purpose.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a streamed reply ends.
#[derive(Clone, Debug)]
pub enum End {
    /// The terminating chunk; the connection stays open for the next request.
    Finish,
    /// The socket closes without the terminating chunk.
    Drop,
    /// The terminating chunk, then the socket closes (a server that keeps
    /// no idle connection).
    Close,
    /// Nothing more is ever sent.
    Hang,
}

#[derive(Clone, Debug)]
pub enum Reply {
    /// A whole body with `content-length`.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A chunked body, one chunk per element, then `end`.
    Chunked {
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Vec<Vec<u8>>,
        end: End,
    },
}

impl Reply {
    pub fn sse(body: impl Into<Vec<u8>>) -> Reply {
        Reply::Full {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
        }
    }

    pub fn json(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut headers: Vec<(String, String)> = headers.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        headers.push(("content-type".into(), "application/json".into()));
        Reply::Full {
            status,
            headers,
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn chunks(chunks: Vec<Vec<u8>>, end: End) -> Reply {
        Reply::Chunked {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            end,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub head: String,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    pub fn path(&self) -> String {
        self.head.split_whitespace().nth(1).unwrap_or_default().to_owned()
    }
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    accepts: AtomicUsize,
}

pub struct Server {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Server {
    pub async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            ..Default::default()
        });
        let s = Arc::clone(&shared);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                s.accepts.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, Arc::clone(&s)));
            }
        });
        Server { addr, shared }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn accepts(&self) -> usize {
        self.shared.accepts.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }
}

async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break pos + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            })
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = buf[head_end..head_end + length].to_vec();
        buf.drain(..head_end + length);
        shared.requests.lock().unwrap().push(Recorded { head, body });
        let reply = shared
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Reply::json(500, &[], "{}"));
        match reply {
            Reply::Full { status, headers, body } => {
                let mut out = status_line(status, &headers);
                out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(&body);
                if stream.write_all(&out).await.is_err() {
                    return;
                }
            }
            Reply::Chunked {
                status,
                headers,
                chunks,
                end,
            } => {
                let mut out = status_line(status, &headers);
                out.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n");
                if stream.write_all(&out).await.is_err() {
                    return;
                }
                for chunk in chunks {
                    let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
                    framed.extend_from_slice(&chunk);
                    framed.extend_from_slice(b"\r\n");
                    if stream.write_all(&framed).await.is_err() {
                        return;
                    }
                    let _ = stream.flush().await;
                }
                match end {
                    End::Finish => {
                        if stream.write_all(b"0\r\n\r\n").await.is_err() {
                            return;
                        }
                    }
                    End::Drop => {
                        let _ = stream.shutdown().await;
                        return;
                    }
                    End::Close => {
                        let _ = stream.write_all(b"0\r\n\r\n").await;
                        let _ = stream.shutdown().await;
                        return;
                    }
                    End::Hang => std::future::pending::<()>().await,
                }
            }
        }
    }
}

fn status_line(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\n").into_bytes();
    for (k, v) in headers {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out
}
