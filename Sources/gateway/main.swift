import GatewayApp

await GatewayCommand.main()
