"""Templates the model's tests read: the repository's own, and a small one written for the loop cases."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = REPO / "template.yaml"

# Two consumers written once (decision 0130's loop): queue, DLQ, function and role per instance.
LOOPED = """
AWSTemplateFormatVersion: "2010-09-09"
Transform: [AWS::LanguageExtensions, AWS::Serverless-2016-10-31]
Parameters:
  NameSuffix:
    Type: String
    Default: ""
Mappings:
  Consumers:
    Erp: {Name: erp, Keys: ["aviso-erp:*", "reserva:*"]}
    Correo: {Name: correo, Keys: ["correo-confirmacion:*"]}
Globals:
  Function:
    Runtime: python3.13
    Timeout: 30
    Environment:
      Variables: {SHARED: "yes"}
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties: {TableName: records}
  Fn::ForEach::Consumers:
    - Name
    - [Erp, Correo]
    - Queue${Name}Dlq:
        Type: AWS::SQS::Queue
        Properties:
          QueueName: !Sub
            - ${n}-dlq${NameSuffix}
            - n: !FindInMap [Consumers, !Ref Name, Name]
      Queue${Name}:
        Type: AWS::SQS::Queue
        Properties:
          QueueName: !Sub
            - ${n}${NameSuffix}
            - n: !FindInMap [Consumers, !Ref Name, Name]
          RedrivePolicy:
            deadLetterTargetArn: !GetAtt [!Sub "Queue${Name}Dlq", Arn]
            maxReceiveCount: 4
      ${Name}Function:
        Type: AWS::Serverless::Function
        Properties:
          CodeUri: !FindInMap [Consumers, !Ref Name, Name]
          Handler: app.handler
          Role: !GetAtt [!Sub "${Name}FunctionRole", Arn]
          Environment:
            Variables: {OWN: "1"}
          Events:
            Source:
              Type: SQS
              Properties:
                Queue: !GetAtt [!Sub "Queue${Name}", Arn]
      ${Name}FunctionRole:
        Type: AWS::IAM::Role
        Properties:
          AssumeRolePolicyDocument: {}
          Policies:
            - PolicyName: own
              PolicyDocument:
                Statement:
                  - Effect: Allow
                    Action: dynamodb:PutItem
                    Resource: !GetAtt Table.Arn
                    Condition:
                      ForAllValues:StringLike:
                        dynamodb:LeadingKeys: !FindInMap [Consumers, !Ref Name, Keys]
"""
