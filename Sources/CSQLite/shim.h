#ifndef WORKFLOW_CSQLITE_SHIM_H
#define WORKFLOW_CSQLITE_SHIM_H

#include <sqlite3.h>

/// `SQLITE_TRANSIENT` as a function: the macro casts -1 to a function pointer, which Swift
/// cannot import. Bound text and blobs are copied by SQLite before the bind call returns.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
