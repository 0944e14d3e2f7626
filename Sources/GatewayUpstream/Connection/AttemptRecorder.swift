import GatewayCore

/// Writes one attempt's phase timings into the exchange record, as
/// ``StoredInstant``s (``AttemptTimings/instants``).
struct AttemptRecorder: Sendable {
    let record: ExchangeRecord
    let index: Int

    func update(_ body: (inout AttemptTimings) -> Void) {
        record.updateAttempt(index, body)
    }

    func requestSent() {
        update { $0.instants.requestSent = .now }
    }

    func responseHead(status: Int) {
        update {
            $0.instants.responseHead = .now
            $0.status = status
        }
    }

    /// The response body was fully read from the upstream.
    func ended() {
        update { if $0.instants.end == nil { $0.instants.end = .now } }
    }

    /// The attempt failed; the first failure wins.
    func failed(_ error: any Error) {
        update {
            if $0.instants.end == nil { $0.instants.end = .now }
            if $0.errorCode == nil, let gatewayError = error as? GatewayError {
                $0.errorCode = gatewayError.code
            }
        }
    }
}
