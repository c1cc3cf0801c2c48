//! The service side of the connection bounds: marks each request busy from
//! its parsed head until its response body is handed over (or abandoned),
//! and a `101 Switching Protocols` answer as an upgrade.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response, StatusCode};
use hyper::body::{Body, Frame, Incoming, SizeHint};

use super::activity::{Activity, Busy};

/// Wraps a hyper service of one connection.
#[derive(Debug, Clone)]
pub struct Tracked<S> {
    inner: S,
    activity: Activity,
}

impl<S> Tracked<S> {
    /// `inner`, reporting to the connection's `activity`.
    pub fn new(inner: S, activity: Activity) -> Self {
        Self { inner, activity }
    }
}

impl<S, B> hyper::service::Service<Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>>,
    S::Future: Send + 'static,
{
    type Response = Response<TrackedBody<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let busy = self.activity.request_started();
        let activity = self.activity.clone();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            if resp.status() == StatusCode::SWITCHING_PROTOCOLS {
                activity.upgraded();
            }
            Ok(resp.map(|inner| TrackedBody { inner, _busy: busy }))
        })
    }
}

/// A response body that keeps its request busy until hyper drops it.
#[derive(Debug)]
pub struct TrackedBody<B> {
    inner: B,
    _busy: Busy,
}

impl<B: Body + Unpin> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
