import Logging
import NIOPosix

/// Loading a ``TokenStore``'s state once, on first use: the state file and,
/// with shared state, the row the replicas committed (the newer wins).
extension TokenStore {
    /// Loads the state file once (and, with shared state, the committed row).
    /// A file for another credential, or one that cannot be read, is ignored
    /// (the configured refresh token is used).
    func loadIfNeeded() async {
        guard !loaded else { return }
        let task: Task<StoredStates, Never>
        if let loading {
            task = loading
        } else {
            let file = self.file
            let shared = self.shared
            let identity = self.identity
            // Read on NIO's blocking-I/O thread pool, not on the cooperative pool.
            task = Task {
                var states = StoredStates()
                do {
                    states.file = .success(try await NIOThreadPool.singleton.runIfActive { try file.load() })
                } catch {
                    states.file = .failure(error)
                }
                if let shared {
                    do {
                        states.shared = .success(try await shared.committedState(credential: identity))
                    } catch {
                        states.shared = .failure(error)
                    }
                }
                return states
            }
            loading = task
        }
        let states = await task.value
        guard !loaded else { return }
        var loadedState = applyFileState(states.file)
        if let shared = states.shared {
            loadedState = mergeShared(shared, over: loadedState)
        }
        state = loadedState
        loaded = true
    }

    /// The state from the file, or the configured one.
    private func applyFileState(_ result: Result<OAuth2TokenState?, any Error>) -> OAuth2TokenState {
        do {
            guard let stored = try result.get() else { return state }
            guard stored.version == OAuth2TokenState.formatVersion, stored.identity == identity else {
                logger.notice("ignoring token state written for another credential configuration", metadata: ["upstream": "\(upstream)", "path": "\(file.path)"])
                return state
            }
            if file.isAccessibleByOthers() {
                logger.warning("token state file is readable by others; it is rewritten with mode 0600 on the next refresh", metadata: ["path": "\(file.path)"])
            }
            var loaded = stored
            if loaded.refreshToken == nil { loaded.refreshToken = config.refreshToken?.value }
            logger.debug("token state loaded", metadata: ["upstream": "\(upstream)", "path": "\(file.path)"])
            return loaded
        } catch {
            logger.warning("ignoring unreadable token state", metadata: ["upstream": "\(upstream)", "error": "\(error)"])
            return state
        }
    }
}

/// What ``TokenStore/loadIfNeeded()`` read: the state file, and the shared row when state is shared.
struct StoredStates: Sendable {
    var file: Result<OAuth2TokenState?, any Error> = .success(nil)
    var shared: Result<OAuth2TokenState?, any Error>?
}
