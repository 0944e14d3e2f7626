/// What the exchange asks of its machine without changing it: the phase
/// it is in, the step to run, whether the upstream's reads wait.
extension ExchangeStateMachine {
    /// Nothing more happens to the exchange (answered, failed or cancelled).
    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// The upstream's response is on its way to the client (with a body).
    var isForwardingBody: Bool {
        if case .responding(bodyless: false) = phase { return true }
        return false
    }

    /// An attempt is in flight, its response head not in yet.
    var isAttempting: Bool {
        if case .attempting = phase { return true }
        return false
    }

    /// The step to run next, while preparing.
    var currentStep: Int? {
        if case .preparing(let step) = phase { return step }
        return nil
    }

    /// Whether the upstream's reads wait: never while a turned-down body is dropped.
    func pausesUpstream(clientWritable: Bool) -> Bool {
        if case .discarding = phase { return false }
        return !clientWritable
    }
}
