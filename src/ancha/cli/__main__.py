from ancha.cli.main import main

main()
