//! A process context that hides what it is, so the search tools take the
//! walk through its `list` and `read_file`: shared by the unit tests and the
//! search benchmark (each includes this file).

use zidane_core::events::{ExecutionHandle, SharedError};
use zidane_core::execution::{DirEntry, ExecOptions, ExecOutput, ExecutionContext, FileStat};
use zidane_provider::BoxFuture;

use super::ProcessContext;

/// The process context without its `as_any`.
pub(crate) struct Opaque(pub(crate) ProcessContext);

impl ExecutionContext for Opaque {
    fn kind(&self) -> &str {
        "opaque"
    }
    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>> {
        self.0.spawn()
    }
    fn exec<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        command: &'a str,
        options: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>> {
        self.0.exec(handle, command, options)
    }
    fn read_file<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, SharedError>> {
        self.0.read_file(handle, path)
    }
    fn write_file<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        self.0.write_file(handle, path, bytes)
    }
    fn list<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>> {
        self.0.list(handle, path)
    }
    fn stat<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Option<FileStat>, SharedError>> {
        self.0.stat(handle, path)
    }
    fn resolve_path(&self, handle: &ExecutionHandle, path: &str) -> Result<String, SharedError> {
        self.0.resolve_path(handle, path)
    }
    fn destroy<'a>(&'a self, handle: &'a ExecutionHandle) -> BoxFuture<'a, ()> {
        self.0.destroy(handle)
    }
}
