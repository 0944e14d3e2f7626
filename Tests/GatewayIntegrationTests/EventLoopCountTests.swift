import GatewayApp
import Testing

@Suite struct EventLoopCountTests {
    @Test(arguments: [
        ("Name:\tgateway\nCpus_allowed_list:\t0-3,6\n", 5 as Int?),
        ("Cpus_allowed_list:\t1\n", 1),
        ("Cpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n", 2),
        ("Cpus_allowed_list:\t3-1\n", nil),
        ("Name:\tgateway\n", nil),
    ])
    func allowedCPUsFromProcStatus(_ status: String, _ expected: Int?) {
        #expect(EventLoopCount.allowedCPUs(inProcStatus: status) == expected)
    }

    @Test func environmentOverridesAndTheCountIsPositive() {
        #expect(EventLoopCount.forThisProcess(environment: ["GATEWAY_EVENT_LOOPS": "3"]) == 3)
        #expect(EventLoopCount.forThisProcess(environment: [:]) >= 1)
    }
}
