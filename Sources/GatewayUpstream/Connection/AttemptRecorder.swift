import GatewayCore

/// Writes one attempt's phase timings into the exchange record, as
/// ``StoredInstant``s (the `$` values of ``AttemptTimings``).
struct AttemptRecorder: Sendable {
    let record: ExchangeRecord
    let index: Int

    func update(_ body: (inout AttemptTimings) -> Void) {
        record.updateAttempt(index, body)
    }

    func requestSent() {
        update { $0.$requestSent = .now }
    }

    func responseHead(status: Int) {
        update {
            $0.$responseHead = .now
            $0.status = status
        }
    }

    /// The response body was fully read from the upstream.
    func ended() {
        update { if $0.$end == nil { $0.$end = .now } }
    }

    /// The attempt failed; the first failure wins.
    func failed(_ error: any Error) {
        update {
            if $0.$end == nil { $0.$end = .now }
            if $0.errorCode == nil, let gatewayError = error as? GatewayError {
                $0.errorCode = gatewayError.code
            }
        }
    }
}
