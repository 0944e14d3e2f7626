import GatewayApp

@main
struct GatewayMain {
    static func main() async {
        await GatewayCommand.main()
    }
}
