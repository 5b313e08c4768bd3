import Foundation

/// For a test's daemon: exits when the process that started it is gone.
///
/// A test process that crashes or is killed runs none of its cleanup, and a daemon it started
/// would serve on for nobody (a CI machine collects them). A daemon built for tests calls
/// `exitWhenOrphaned()` first thing: a thread notices within a fifth of a second that its parent
/// has changed (the orphan was adopted) and ends the process at once with status 3 (`_exit`: no
/// cleanup runs, nobody is left to flush anything for).
public enum ParentWatch {
    /// Starts the watch (once per process).
    public static func exitWhenOrphaned() {
        let parent = getppid()
        let thread = Thread {
            while getppid() == parent { usleep(200_000) }
            _exit(3)
        }
        thread.name = "parent watch"
        thread.start()
    }
}
