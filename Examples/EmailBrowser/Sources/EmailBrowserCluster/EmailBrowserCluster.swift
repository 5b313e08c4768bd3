import WorkflowCluster
import EmailBrowser
import WorkflowRemote

/// The email browser as a cluster application: what the shipped `workflow-coordinator` hosts
/// and what the shipped `workflow-worker` can host.
public enum EmailBrowserCluster {
    /// The root `email-browser`: the split browser with both panes placed `.configured`, printed
    /// as the browser's screens (`EmailBrowserFrames`).
    public static var roots: RootWorkflowRegistry {
        RootWorkflowRegistry().registering("email-browser", frames: { screen, _ in EmailBrowserFrames.frame(of: screen) }) {
            EmailBrowserWorkflow(inboxPlacement: .configured, messagePlacement: .configured)
        }
    }

    /// The panes a worker hosts: the inbox and the message.
    public static var workerTypes: RemotableRegistry {
        RemotableRegistry().registering(InboxWorkflow.self).registering(MessageWorkflow.self)
    }
}
