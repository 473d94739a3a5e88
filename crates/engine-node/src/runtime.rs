//! The addon's runtime: the pool of engine threads every export runs its work on, the
//! Promise and error plumbing (engine code -> JS `err.code`), `JobControl`, and the serde
//! crossing of the boundary: options objects in as the engine's option structs, the engine's
//! result structs out as JS objects.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex, OnceLock};

use engine::{EngineError, ErrorCode};
use napi::bindgen_prelude::*;
use napi::JsError;
use napi_derive::napi;
use serde::de::DeserializeOwned;
use serde::Serialize;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// MuPDF recurses on nested objects; give it more room than Rust's 2 MiB default.
const ENGINE_THREAD_STACK: usize = 16 << 20;

fn submit(job: Job) {
    static POOL: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let sender = POOL.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = crate::settings::settings()
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("engine-{i}"))
                .stack_size(ENGINE_THREAD_STACK)
                .spawn(move || loop {
                    let job = match rx.lock() {
                        Ok(guard) => guard.recv(),
                        Err(_) => return,
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                })
                .expect("spawning an engine thread");
        }
        Mutex::new(tx)
    });
    sender.lock().expect("engine pool lock").send(job).expect("engine pool is running");
}

/// Builds the JS error: `code` = engine code, `message` = detail.
fn js_error(env: &Env, e: &EngineError) -> Error {
    let native = Error::new(e.code.as_str(), e.message.clone());
    let raw = env.raw();
    let value = unsafe { JsError::from(native).into_value(raw) };
    if value.is_null() {
        return Error::new(Status::GenericFailure, e.to_string());
    }
    match unsafe { Unknown::from_napi_value(raw, value) } {
        Ok(unknown) => Error::from(unknown),
        Err(_) => Error::new(Status::GenericFailure, e.to_string()),
    }
}

type Resolver = Box<dyn FnOnce(Env) -> Result<serde_json::Value> + Send>;

/// Runs `work` on an engine thread; the returned Promise settles with its result, serialized
/// (serde) under the engine's field names.
pub(crate) fn spawn_job<T, F>(env: &Env, work: F) -> Result<Object<'_>>
where
    T: Serialize + 'static,
    F: FnOnce() -> engine::Result<T> + Send + 'static,
{
    let (deferred, promise) = env.create_deferred::<serde_json::Value, Resolver>()?;
    submit(Box::new(move || {
        let outcome = catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|panic| {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(EngineError::new(ErrorCode::EngineError, format!("internal error: {detail}")))
        });
        let outcome = outcome.and_then(|result| {
            serde_json::to_value(result)
                .map_err(|e| EngineError::new(ErrorCode::EngineError, format!("serializing the result: {e}")))
        });
        deferred.resolve(Box::new(move |env| outcome.map_err(|e| js_error(&env, &e))));
    }));
    Ok(promise)
}

pub(crate) fn control_of(control: Option<&JobControl>) -> Arc<engine::JobControl> {
    control.map_or_else(Default::default, |c| c.inner.clone())
}

/// An options object as the engine's options struct `T`, read by serde under the API's names.
/// It is read as JSON is: absent (`null`, `undefined`) is `{}`, a key whose value is
/// `undefined` is absent. An object `T` does not take (an unknown field, a value of the wrong
/// type or out of its type's range) is `invalid_options`, naming the field; the caller hands
/// the error to `spawn_job`'s work, so that it rejects the Promise like any refusal.
pub(crate) fn options_from<T: DeserializeOwned>(env: &Env, value: Option<Unknown<'_>>) -> engine::Result<T> {
    let invalid = |message: String| EngineError::new(ErrorCode::InvalidOptions, message);
    let json = match value {
        None => serde_json::Value::Object(Default::default()),
        Some(value) => unsafe { serde_json::Value::from_napi_value(env.raw(), value.raw()) }
            .map_err(|e| invalid(format!("options: {}", e.reason)))?,
    };
    serde_path_to_error::deserialize(json).map_err(|e| match e.path().to_string().as_str() {
        "." => invalid(format!("options: {}", e.inner())),
        path => invalid(format!("options.{path}: {}", e.inner())),
    })
}

// ---------------------------------------------------------------------------------
// JobControl

/// Cancellation flag and page progress shared with engine threads.
#[napi]
pub struct JobControl {
    inner: Arc<engine::JobControl>,
}

/// Pages done out of the total (0 until the engine knows it).
#[napi(object)]
pub struct Progress {
    pub done: f64,
    pub total: f64,
}

#[napi]
impl JobControl {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self { inner: Arc::new(engine::JobControl::new()) }
    }

    /// Asks the operation to stop at its next page checkpoint; it then rejects with
    /// code `cancelled`. Calling it before the operation starts makes it reject at once.
    #[napi]
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    #[napi]
    pub fn progress(&self) -> Progress {
        let p = self.inner.progress();
        Progress { done: p.done as f64, total: p.total as f64 }
    }
}
